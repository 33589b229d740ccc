// The optimizer, entirely on the GPU so no step needs the CPU: global gradient norm (two-stage
// sum of squares), the warmup + cosine schedule and bias corrections from a step counter kept in
// `state`, then AdamW with decoupled weight decay on the first decayEnd elements (the matrices).
struct Hyper {
  n: u32, decayEnd: u32, warmup: f32, total: f32,
  lr: f32, minLr: f32, beta1: f32, beta2: f32,
  eps: f32, weightDecay: f32, clipNorm: f32, stride: u32,
}

@group(0) @binding(0) var<storage, read> grads: array<f32>;
@group(0) @binding(1) var<storage, read_write> partial: array<f32>;
@group(0) @binding(2) var<storage, read_write> state: array<f32>; // [step, lr, bc1, bc2, clip scale, norm]
@group(0) @binding(3) var<uniform> h: Hyper;
@group(0) @binding(4) var<storage, read_write> w: array<f32>;
@group(0) @binding(5) var<storage, read_write> m1: array<f32>;
@group(0) @binding(6) var<storage, read_write> m2: array<f32>;
@group(0) @binding(7) var<storage, read> st: array<f32>;

const GROUPS = 256u;
var<workgroup> red: array<f32, 256>;

fn reduce(t: u32) {
  for (var s = 128u; s > 0u; s >>= 1u) {
    workgroupBarrier();
    if (t < s) { red[t] += red[t + s]; }
  }
}

@compute @workgroup_size(256)
fn sum_squares(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) t: u32) {
  var s = 0.0;
  for (var i = wg.x * 256u + t; i < h.n; i += GROUPS * 256u) { let g = grads[i]; s += g * g; }
  red[t] = s;
  reduce(t);
  if (t == 0u) { partial[wg.x] = red[0]; }
}

@compute @workgroup_size(256)
fn finalize(@builtin(local_invocation_index) t: u32) {
  red[t] = partial[t];
  reduce(t);
  if (t != 0u) { return; }
  let norm = sqrt(red[0]);
  let step = state[0] + 1.0;
  var lr = h.lr * step / max(1.0, h.warmup);
  if (step > h.warmup) {
    let progress = min(1.0, (step - h.warmup) / max(1.0, h.total - h.warmup));
    lr = h.minLr + 0.5 * (h.lr - h.minLr) * (1.0 + cos(3.141592653589793 * progress));
  }
  var scale = 1.0;
  if (h.clipNorm > 0.0) { scale = min(1.0, h.clipNorm / (norm + 1e-6)); }
  state[0] = step;
  state[1] = lr;
  state[2] = 1.0 - pow(h.beta1, step);
  state[3] = 1.0 - pow(h.beta2, step);
  state[4] = scale;
  state[5] = norm;
}

@compute @workgroup_size(256)
fn adamw(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.y * h.stride + gid.x;
  if (i >= h.n) { return; }
  let g = grads[i] * st[4];
  let m = h.beta1 * m1[i] + (1.0 - h.beta1) * g;
  let v = h.beta2 * m2[i] + (1.0 - h.beta2) * g * g;
  m1[i] = m;
  m2[i] = v;
  var decay = 0.0;
  if (i < h.decayEnd) { decay = h.weightDecay * w[i]; }
  w[i] -= st[1] * (m / st[2] / (sqrt(v / st[3]) + h.eps) + decay);
}
