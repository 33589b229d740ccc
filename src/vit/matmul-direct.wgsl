// The same batched matmul as matmul.wgsl (C = alpha·op(A)·op(B) [+ bias[n]] [+ R] [+ C], same
// Params and bindings) without workgroup memory or barriers: each thread keeps a 4×4 block of C in
// four vec4 registers and reads A and B straight from storage. CPU adapters (lavapipe,
// SwiftShader) run a workgroup as SIMD lanes over a cached memory, where staging tiles and
// barriers cost more than they save; GPUs keep the tiled kernel.
// (matmul-common.wgsl is prepended: overrides TRANS_A/TRANS_B, Params `p`, bindings a, b, c, bias, res.)

const WG = 8u; // threads per side; a workgroup covers 32×32 outputs
const TB = 4u;

fn store(baseC: u32, m: u32, n: u32, value: f32) {
  if (m >= p.M || n >= p.N) { return; }
  let at = baseC + m * p.ldc + n;
  var v = p.alpha * value;
  if ((p.flags & 1u) != 0u) { v += bias[p.biasOff + n]; }
  if ((p.flags & 2u) != 0u) { v += res[at]; }
  if ((p.flags & 4u) != 0u) { v += c[at]; }
  c[at] = v;
}

fn storeRow(baseC: u32, m: u32, n: u32, row: vec4f) {
  store(baseC, m, n, row.x);
  store(baseC, m, n + 1u, row.y);
  store(baseC, m, n + 2u, row.z);
  store(baseC, m, n + 3u, row.w);
}

@compute @workgroup_size(WG, WG)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let m0 = gid.y * TB;
  let n0 = gid.x * TB;
  if (m0 >= p.M || n0 >= p.N) { return; }
  let z1 = gid.z / p.inner;
  let z2 = gid.z % p.inner;
  let baseA = p.offA + z1 * p.sA1 + z2 * p.sA2;
  let baseB = p.offB + z1 * p.sB1 + z2 * p.sB2;
  let baseC = p.offC + z1 * p.sC1 + z2 * p.sC2;
  // Rows and columns past the edge read the last valid one; their results are never stored.
  let last = vec4u(p.M - 1u, p.N - 1u, 0u, 0u);
  let ms = min(vec4u(m0, m0 + 1u, m0 + 2u, m0 + 3u), vec4u(last.x));
  let ns = min(vec4u(n0, n0 + 1u, n0 + 2u, n0 + 3u), vec4u(last.y));
  // Element (m, k) of op(A) is at aRow[m] + k·aStep; element (k, n) of op(B) at bCol[n] + k·bStep.
  var aRow = baseA + ms * p.lda;
  var aStep = 1u;
  if (TRANS_A) { aRow = baseA + ms; aStep = p.lda; }
  var bCol = baseB + ns;
  var bStep = p.ldb;
  if (TRANS_B) { bCol = baseB + ns * p.ldb; bStep = 1u; }
  var c0 = vec4f(0.0);
  var c1 = vec4f(0.0);
  var c2 = vec4f(0.0);
  var c3 = vec4f(0.0);
  for (var k = 0u; k < p.K; k++) {
    let ka = k * aStep;
    let kb = k * bStep;
    let bv = vec4f(b[bCol.x + kb], b[bCol.y + kb], b[bCol.z + kb], b[bCol.w + kb]);
    c0 = fma(vec4f(a[aRow.x + ka]), bv, c0);
    c1 = fma(vec4f(a[aRow.y + ka]), bv, c1);
    c2 = fma(vec4f(a[aRow.z + ka]), bv, c2);
    c3 = fma(vec4f(a[aRow.w + ka]), bv, c3);
  }
  storeRow(baseC, m0, n0, c0);
  storeRow(baseC, m0 + 1u, n0, c1);
  storeRow(baseC, m0 + 2u, n0, c2);
  storeRow(baseC, m0 + 3u, n0, c3);
}
