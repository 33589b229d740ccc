// Fused multi-head softmax attention over a packed qkv matrix [B·T, 3D] (head h of q, k, v at
// columns h·hd, D + h·hd, 2D + h·hd). One thread owns one query row (forward, backward_rows) or
// one key row (backward_cols): no workgroup barriers, which matters on CPU adapters where a
// barrier-heavy 64×64 matmul tile is mostly padding for T×T = 17×17 problems. The probabilities
// are kept for the backward pass; backward_rows turns dP into dS in place and writes dQ, then
// backward_cols sums over queries for dK and dV.
// CAUSAL (the GPT's, over packed documents): query i sees key j only when j ≤ i and both carry the
// same document id (padding, id −1, sees only padding), so documents packed in one row never see
// each other. Every loop is cut to the causal half, masked pairs are left at probability 0, and
// entries above the diagonal are neither written nor read.
override CAUSAL: bool = false;

struct Params { B: u32, H: u32, T: u32, hd: u32, D: u32, scale: f32, pad0: u32, pad1: u32 }

@group(0) @binding(0) var<storage, read> qkv: array<f32>;
@group(0) @binding(1) var<storage, read_write> probs: array<f32>; // [B, H, T, T]
@group(0) @binding(2) var<storage, read_write> o: array<f32>; // [B·T, D]
@group(0) @binding(3) var<storage, read> dO: array<f32>; // [B·T, D]
@group(0) @binding(4) var<storage, read_write> dS: array<f32>; // [B, H, T, T]
@group(0) @binding(5) var<storage, read_write> dqkv: array<f32>; // [B·T, 3D]
@group(0) @binding(6) var<uniform> p: Params;
@group(0) @binding(7) var<storage, read> P: array<f32>; // probs, read-only in backward
@group(0) @binding(8) var<storage, read> docIds: array<i32>; // [B·T], read only when CAUSAL

// Element e of head h's q (part 0), k (1) or v (2) for token t of sequence b.
fn at(b: u32, h: u32, t: u32, part: u32, e: u32) -> u32 {
  return (b * p.T + t) * 3u * p.D + part * p.D + h * p.hd + e;
}

// The keys query i may see are 0 … keys(i) − 1; of them, those of its document.
fn keys(i: u32) -> u32 {
  return select(p.T, i + 1u, CAUSAL);
}

fn sees(b: u32, i: u32, j: u32) -> bool {
  return !CAUSAL || docIds[b * p.T + i] == docIds[b * p.T + j];
}

@compute @workgroup_size(64)
fn forward(@builtin(global_invocation_id) gid: vec3u) {
  let r = gid.x; // (b·H + h)·T + i
  if (r >= p.B * p.H * p.T) { return; }
  let i = r % p.T;
  let h = (r / p.T) % p.H;
  let b = r / (p.T * p.H);
  let row = r * p.T;
  var m = -3.4e38;
  for (var j = 0u; j < keys(i); j++) {
    if (!sees(b, i, j)) { continue; }
    var s = 0.0;
    for (var e = 0u; e < p.hd; e++) { s += qkv[at(b, h, i, 0u, e)] * qkv[at(b, h, j, 1u, e)]; }
    s *= p.scale;
    probs[row + j] = s;
    m = max(m, s);
  }
  var sum = 0.0;
  for (var j = 0u; j < keys(i); j++) {
    var x = 0.0;
    if (sees(b, i, j)) { x = exp(probs[row + j] - m); }
    probs[row + j] = x;
    sum += x;
  }
  let inv = 1.0 / sum; // i sees itself, so sum ≥ 1
  for (var j = 0u; j < keys(i); j++) { probs[row + j] *= inv; }
  for (var e = 0u; e < p.hd; e++) {
    var acc = 0.0;
    for (var j = 0u; j < keys(i); j++) { acc += probs[row + j] * qkv[at(b, h, j, 2u, e)]; }
    o[(b * p.T + i) * p.D + h * p.hd + e] = acc;
  }
}

@compute @workgroup_size(64)
fn backward_rows(@builtin(global_invocation_id) gid: vec3u) {
  let r = gid.x;
  if (r >= p.B * p.H * p.T) { return; }
  let i = r % p.T;
  let h = (r / p.T) % p.H;
  let b = r / (p.T * p.H);
  let row = r * p.T;
  let ob = (b * p.T + i) * p.D + h * p.hd;
  var dot = 0.0;
  for (var j = 0u; j < keys(i); j++) {
    var g = 0.0;
    for (var e = 0u; e < p.hd; e++) { g += dO[ob + e] * qkv[at(b, h, j, 2u, e)]; }
    dS[row + j] = g;
    dot += g * P[row + j];
  }
  for (var j = 0u; j < keys(i); j++) { dS[row + j] = P[row + j] * (dS[row + j] - dot); }
  for (var e = 0u; e < p.hd; e++) {
    var acc = 0.0;
    for (var j = 0u; j < keys(i); j++) { acc += dS[row + j] * qkv[at(b, h, j, 1u, e)]; }
    dqkv[at(b, h, i, 0u, e)] = p.scale * acc;
  }
}

@compute @workgroup_size(64)
fn backward_cols(@builtin(global_invocation_id) gid: vec3u) {
  let r = gid.x; // (b·H + h)·T + j
  if (r >= p.B * p.H * p.T) { return; }
  let j = r % p.T;
  let h = (r / p.T) % p.H;
  let b = r / (p.T * p.H);
  let base = (b * p.H + h) * p.T * p.T;
  for (var e = 0u; e < p.hd; e++) {
    var dk = 0.0;
    var dv = 0.0;
    for (var i = select(0u, j, CAUSAL); i < p.T; i++) {
      let c = base + i * p.T + j;
      dk += dS[c] * qkv[at(b, h, i, 0u, e)];
      dv += P[c] * dO[(b * p.T + i) * p.D + h * p.hd + e];
    }
    dqkv[at(b, h, j, 1u, e)] = p.scale * dk;
    dqkv[at(b, h, j, 2u, e)] = dv;
  }
}
