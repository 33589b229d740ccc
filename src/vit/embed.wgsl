// Patch embedding's data movement: images [B,C,S,S] → patch rows [B·patches, C·p·p] (the matmul
// with the patch weights follows), token assembly (class token + patch embeddings + positions)
// and its backward.
struct Params {
  B: u32, C: u32, S: u32, P: u32,
  grid: u32, T: u32, D: u32, total: u32,
  clsOff: u32, posOff: u32, stride: u32, pad: u32,
}

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>; // flat parameters
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(256)
fn patchify(@builtin(global_invocation_id) gid: vec3u) {
  let o = gid.y * p.stride + gid.x;
  if (o >= p.total) { return; }
  let pd = p.C * p.P * p.P;
  let row = o / pd;
  let e = o % pd;
  let ch = e / (p.P * p.P);
  let y = (e / p.P) % p.P;
  let x = e % p.P;
  let patches = p.grid * p.grid;
  let b = row / patches;
  let q = row % patches;
  let gy = q / p.grid;
  let gx = q % p.grid;
  dst[o] = src[((b * p.C + ch) * p.S + gy * p.P + y) * p.S + gx * p.P + x];
}

// x[b, t] = pos[t] + (t == 0 ? cls : pe[b, t - 1]); src = patch embeddings.
@compute @workgroup_size(256)
fn tokens_forward(@builtin(global_invocation_id) gid: vec3u) {
  let o = gid.y * p.stride + gid.x;
  if (o >= p.total) { return; }
  let i = o % p.D;
  let t = (o / p.D) % p.T;
  let b = o / (p.D * p.T);
  var v = w[p.posOff + t * p.D + i];
  if (t == 0u) { v += w[p.clsOff + i]; } else { v += src[(b * (p.T - 1u) + t - 1u) * p.D + i]; }
  dst[o] = v;
}

// One thread per (t, i): dpos sums over the batch, dcls takes row 0, dst gets dL/dpe rows.
@compute @workgroup_size(256)
fn tokens_backward(@builtin(global_invocation_id) gid: vec3u) {
  let o = gid.x;
  if (o >= p.T * p.D) { return; }
  let i = o % p.D;
  let t = o / p.D;
  var s = 0.0;
  for (var b = 0u; b < p.B; b++) {
    let g = src[(b * p.T + t) * p.D + i];
    s += g;
    if (t > 0u) { dst[(b * (p.T - 1u) + t - 1u) * p.D + i] = g; }
  }
  grads[p.posOff + o] = s;
  if (t == 0u) { grads[p.clsOff + i] = s; }
}
