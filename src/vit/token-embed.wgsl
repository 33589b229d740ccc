// The GPT's token + position embedding of a packed batch and its backward. Ids and positions are i32 per
// row position; one outside its table (a bad id, a position past the context) embeds as zeros and
// gets no gradient, so bad input never reads or writes outside the parameters. The backward
// gathers instead of scattering (one thread per table element sums the rows that used it), so it
// needs no atomics and gives the same sums on every run.
struct Params {
  rows: u32, D: u32, V: u32, context: u32,
  wteOff: u32, wpeOff: u32, stride: u32, total: u32,
}

@group(0) @binding(0) var<storage, read> inputs: array<i32>;
@group(0) @binding(1) var<storage, read> positions: array<i32>;
@group(0) @binding(2) var<storage, read> w: array<f32>; // flat parameters
@group(0) @binding(3) var<storage, read_write> x: array<f32>; // [rows, D]
@group(0) @binding(4) var<storage, read> dx: array<f32>; // [rows, D]
@group(0) @binding(5) var<storage, read_write> grads: array<f32>;
@group(0) @binding(6) var<uniform> p: Params;

@compute @workgroup_size(256)
fn forward(@builtin(global_invocation_id) gid: vec3u) {
  let o = gid.y * p.stride + gid.x;
  if (o >= p.total) { return; }
  let r = o / p.D;
  let i = o % p.D;
  let token = inputs[r];
  let position = positions[r];
  var v = 0.0;
  if (token >= 0 && u32(token) < p.V) { v += w[p.wteOff + u32(token) * p.D + i]; }
  if (position >= 0 && u32(position) < p.context) { v += w[p.wpeOff + u32(position) * p.D + i]; }
  x[o] = v;
}

// Threads [0, V·D) add the embedding's part to the token table's gradient (the tied head wrote
// its part first); threads [V·D, (V + context)·D) write the position table's.
@compute @workgroup_size(256)
fn backward(@builtin(global_invocation_id) gid: vec3u) {
  let o = gid.y * p.stride + gid.x;
  if (o >= p.total) { return; }
  let tokenPart = o < p.V * p.D;
  let e = select(o - p.V * p.D, o, tokenPart);
  let row = i32(e / p.D);
  let i = e % p.D;
  var s = 0.0;
  for (var r = 0u; r < p.rows; r++) {
    let key = select(positions[r], inputs[r], tokenPart);
    if (key == row) { s += dx[r * p.D + i]; }
  }
  if (tokenPart) { grads[p.wteOff + e] += s; } else { grads[p.wpeOff + e] = s; }
}
