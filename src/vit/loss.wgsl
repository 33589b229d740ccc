// Softmax cross-entropy forward and backward in one pass: one workgroup walks the batch, writes
// dL/dlogits (mean over the batch size) and adds the summed loss, the number of labelled rows and
// of correct predictions to `stats` — read back only now and then, never per step.
struct Params { B: u32, K: u32, pad0: u32, pad1: u32 }

@group(0) @binding(0) var<storage, read> logits: array<f32>;
@group(0) @binding(1) var<storage, read> labels: array<i32>;
@group(0) @binding(2) var<storage, read_write> dlogits: array<f32>;
@group(0) @binding(3) var<storage, read_write> stats: array<f32>; // [loss sum, rows, correct, batches]
@group(0) @binding(4) var<uniform> p: Params;

var<workgroup> red: array<vec3f, 64>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) t: u32) {
  var acc = vec3f(0.0);
  let invB = 1.0 / f32(p.B);
  for (var b = t; b < p.B; b += 64u) {
    let y = labels[b];
    let base = b * p.K;
    if (y < 0) {
      for (var k = 0u; k < p.K; k++) { dlogits[base + k] = 0.0; }
      continue;
    }
    var m = logits[base];
    var arg = 0u;
    for (var k = 1u; k < p.K; k++) { if (logits[base + k] > m) { m = logits[base + k]; arg = k; } }
    var s = 0.0;
    for (var k = 0u; k < p.K; k++) { s += exp(logits[base + k] - m); }
    let inv = 1.0 / s;
    for (var k = 0u; k < p.K; k++) {
      var g = exp(logits[base + k] - m) * inv;
      if (k == u32(y)) { g -= 1.0; }
      dlogits[base + k] = g * invB;
    }
    acc += vec3f(log(s) + m - logits[base + u32(y)], 1.0, select(0.0, 1.0, arg == u32(y)));
  }
  red[t] = acc;
  for (var s = 32u; s > 0u; s >>= 1u) {
    workgroupBarrier();
    if (t < s) { red[t] += red[t + s]; }
  }
  if (t == 0u) {
    stats[0] += red[0].x;
    stats[1] += red[0].y;
    stats[2] += red[0].z;
    stats[3] += 1.0;
  }
}
