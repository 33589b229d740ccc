// Softmax cross-entropy forward and backward in one workgroup over B rows of K logits. A row whose
// label is outside [0, K) (−1: padding, nothing to predict) has no loss and a zero gradient.
// dL/dlogits is the gradient of the mean over the B rows (the ViT: a padded batch keeps its
// scale) or, with LABELLED_MEAN (the GPT's next-token loss), over the labelled rows, counted in a
// first sweep. The summed loss, the labelled rows and the correct argmax predictions are added to
// `stats`, which the trainer reads back only now and then, never per step.
override LABELLED_MEAN: bool = false;

struct Params { B: u32, K: u32, pad0: u32, pad1: u32 }

@group(0) @binding(0) var<storage, read> logits: array<f32>; // [B, K]
@group(0) @binding(1) var<storage, read> labels: array<i32>;
@group(0) @binding(2) var<storage, read_write> dlogits: array<f32>;
@group(0) @binding(3) var<storage, read_write> stats: array<f32>; // [loss sum, labelled, correct, batches]
@group(0) @binding(4) var<uniform> p: Params;

const THREADS = 256u;
var<workgroup> red: array<vec3f, 256>;

fn reduce(t: u32) {
  for (var s = THREADS / 2u; s > 0u; s >>= 1u) {
    workgroupBarrier();
    if (t < s) { red[t] += red[t + s]; }
  }
  workgroupBarrier();
}

fn labelled(r: u32) -> bool {
  let y = labels[r];
  return y >= 0 && u32(y) < p.K;
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) t: u32) {
  var n = f32(p.B);
  if (LABELLED_MEAN) {
    var count = 0.0;
    for (var r = t; r < p.B; r += THREADS) { if (labelled(r)) { count += 1.0; } }
    red[t] = vec3f(count, 0.0, 0.0);
    reduce(t);
    n = red[0].x;
    workgroupBarrier();
  }
  let inv = 1.0 / max(n, 1.0);
  var acc = vec3f(0.0);
  for (var r = t; r < p.B; r += THREADS) {
    let base = r * p.K;
    if (!labelled(r)) {
      for (var k = 0u; k < p.K; k++) { dlogits[base + k] = 0.0; }
      continue;
    }
    let y = u32(labels[r]);
    var m = logits[base];
    var arg = 0u;
    for (var k = 1u; k < p.K; k++) { if (logits[base + k] > m) { m = logits[base + k]; arg = k; } }
    var s = 0.0;
    for (var k = 0u; k < p.K; k++) { s += exp(logits[base + k] - m); }
    let invS = 1.0 / s;
    for (var k = 0u; k < p.K; k++) {
      var g = exp(logits[base + k] - m) * invS;
      if (k == y) { g -= 1.0; }
      dlogits[base + k] = g * inv;
    }
    acc += vec3f(log(s) + m - logits[base + y], 1.0, select(0.0, 1.0, arg == y));
  }
  red[t] = acc;
  reduce(t);
  if (t == 0u) {
    stats[0] += red[0].x;
    stats[1] += red[0].y;
    stats[2] += red[0].z;
    stats[3] += 1.0;
  }
}
