// Layer norm over rows of D features. One 64-thread workgroup per row reduces in workgroup
// memory (two passes, mean then variance, for accuracy). Rows may be strided, so the final norm
// reads only the class-token rows of [B, T, D] without a gather copy.
struct Params {
  rows: u32, D: u32, xStride: u32, yStride: u32,
  gOff: u32, bOff: u32, accumulate: u32, eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>; // flat parameters: gain at gOff, bias at bOff
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> stats: array<f32>; // [rows][mean, rstd]
@group(0) @binding(4) var<uniform> p: Params;
@group(0) @binding(5) var<storage, read> dy: array<f32>;
@group(0) @binding(6) var<storage, read_write> dx: array<f32>;
@group(0) @binding(7) var<storage, read> st: array<f32>;
@group(0) @binding(8) var<storage, read_write> grads: array<f32>;

var<workgroup> red: array<f32, 64>;
var<workgroup> red2: array<f32, 64>;

fn reduce2(t: u32) {
  for (var s = 32u; s > 0u; s >>= 1u) {
    workgroupBarrier();
    if (t < s) { red[t] += red[t + s]; red2[t] += red2[t + s]; }
  }
  workgroupBarrier();
}

@compute @workgroup_size(64)
fn forward(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) t: u32) {
  let r = wg.x;
  let xb = r * p.xStride;
  var s = 0.0;
  for (var i = t; i < p.D; i += 64u) { s += x[xb + i]; }
  red[t] = s;
  red2[t] = 0.0;
  reduce2(t);
  let mean = red[0] / f32(p.D);
  workgroupBarrier();
  var v = 0.0;
  for (var i = t; i < p.D; i += 64u) { let d = x[xb + i] - mean; v += d * d; }
  red[t] = v;
  reduce2(t);
  let rstd = inverseSqrt(red[0] / f32(p.D) + p.eps);
  for (var i = t; i < p.D; i += 64u) {
    y[r * p.yStride + i] = (x[xb + i] - mean) * rstd * w[p.gOff + i] + w[p.bOff + i];
  }
  if (t == 0u) { stats[2u * r] = mean; stats[2u * r + 1u] = rstd; }
}

// dx (+)= rstd·(dxhat − mean(dxhat) − xhat·mean(dxhat·xhat)), dxhat = dy·g.
@compute @workgroup_size(64)
fn backward(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) t: u32) {
  let r = wg.x;
  let xb = r * p.xStride;
  let yb = r * p.yStride;
  let mean = st[2u * r];
  let rstd = st[2u * r + 1u];
  var s1 = 0.0;
  var s2 = 0.0;
  for (var i = t; i < p.D; i += 64u) {
    let dxhat = dy[yb + i] * w[p.gOff + i];
    s1 += dxhat;
    s2 += dxhat * (x[xb + i] - mean) * rstd;
  }
  red[t] = s1;
  red2[t] = s2;
  reduce2(t);
  let m1 = red[0] / f32(p.D);
  let m2 = red2[0] / f32(p.D);
  for (var i = t; i < p.D; i += 64u) {
    let xhat = (x[xb + i] - mean) * rstd;
    var v = rstd * (dy[yb + i] * w[p.gOff + i] - m1 - xhat * m2);
    if (p.accumulate != 0u) { v += dx[xb + i]; }
    dx[xb + i] = v;
  }
}

// Gain and bias gradients: one thread per feature sums over rows.
@compute @workgroup_size(64)
fn params_backward(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x;
  if (i >= p.D) { return; }
  var dg = 0.0;
  var db = 0.0;
  for (var r = 0u; r < p.rows; r++) {
    let g = dy[r * p.yStride + i];
    dg += g * (x[r * p.xStride + i] - st[2u * r]) * st[2u * r + 1u];
    db += g;
  }
  grads[p.gOff + i] = dg;
  grads[p.bOff + i] = db;
}
