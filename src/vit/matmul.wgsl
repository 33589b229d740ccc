// Tiled, register-blocked, batched matmul: C = alpha·op(A)·op(B) [+ bias[n]] [+ R] [+ C].
// A workgroup computes a BM×BN tile of C (64×64 by default) from 16-deep slices of A and B staged
// in workgroup memory; each of its WG×WG threads keeps a TB×TB block of outputs in registers,
// rows and columns strided by WG so neighbouring threads read neighbouring workgroup-memory words.
// (matmul-common.wgsl is prepended: overrides TRANS_A/TRANS_B, Params `p`, bindings a, b, c, bias, res.)

// The tile shape is a pipeline constant so the benchmark can compare register blocking side by
// side: WG×WG threads, each computing TB×TB outputs (WG·TB ≤ 64, TB ≤ 8). Default 8×8 threads ×
// 8×8 outputs: on dawn + Mesa 25 lavapipe it ran 512³ at ~1.6 GFLOP/s against ~1.2 for 16×16 × 4×4
// and ~0.3 with no register blocking (Deno's older lavapipe prefers 16×16 × 4×4 by ~1.2×).
override WG: u32 = 8u; // threads per side of the workgroup
override TB: u32 = 8u; // outputs per thread per side
const BK = 16u;
override BM: u32 = WG * TB;
override BN: u32 = WG * TB;
override LOADS: u32 = BM * BK / (WG * WG); // elements of each operand per thread per K slice
var<workgroup> As: array<f32, 1024>; // [BK][BM], BM ≤ 64
var<workgroup> Bs: array<f32, 1024>; // [BK][BN]

@compute @workgroup_size(WG, WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u, @builtin(local_invocation_index) tid: u32) {
  let z1 = wg.z / p.inner;
  let z2 = wg.z % p.inner;
  let baseA = p.offA + z1 * p.sA1 + z2 * p.sA2;
  let baseB = p.offB + z1 * p.sB1 + z2 * p.sB2;
  let baseC = p.offC + z1 * p.sC1 + z2 * p.sC2;
  let row0 = wg.y * BM;
  let col0 = wg.x * BN;
  var acc: array<f32, 64>;
  var ra: array<f32, 8>;
  var rb: array<f32, 8>;
  for (var k0 = 0u; k0 < p.K; k0 += BK) {
    for (var i = 0u; i < LOADS; i++) {
      let idx = tid + i * WG * WG;
      // Consecutive threads walk the stored layout's contiguous dimension (coalesced loads).
      var m = idx / BK;
      var k = idx % BK;
      if (TRANS_A) { m = idx % BM; k = idx / BM; }
      let gm = row0 + m;
      let gk = k0 + k;
      var va = 0.0;
      if (gm < p.M && gk < p.K) {
        if (TRANS_A) { va = a[baseA + gk * p.lda + gm]; } else { va = a[baseA + gm * p.lda + gk]; }
      }
      As[k * BM + m] = va;
      var n = idx % BN;
      var kb = idx / BN;
      if (TRANS_B) { n = idx / BK; kb = idx % BK; }
      let gn = col0 + n;
      let gkb = k0 + kb;
      var vb = 0.0;
      if (gn < p.N && gkb < p.K) {
        if (TRANS_B) { vb = b[baseB + gn * p.ldb + gkb]; } else { vb = b[baseB + gkb * p.ldb + gn]; }
      }
      Bs[kb * BN + n] = vb;
    }
    workgroupBarrier();
    for (var k = 0u; k < BK; k++) {
      for (var i = 0u; i < TB; i++) {
        ra[i] = As[k * BM + lid.y + WG * i];
        rb[i] = Bs[k * BN + lid.x + WG * i];
      }
      for (var i = 0u; i < TB; i++) {
        for (var j = 0u; j < TB; j++) {
          acc[i * TB + j] = fma(ra[i], rb[j], acc[i * TB + j]);
        }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < TB; i++) {
    let gm = row0 + lid.y + WG * i;
    for (var j = 0u; j < TB; j++) {
      let gn = col0 + lid.x + WG * j;
      if (gm < p.M && gn < p.N) {
        let at = baseC + gm * p.ldc + gn;
        var v = p.alpha * acc[i * TB + j];
        if ((p.flags & 1u) != 0u) { v += bias[p.biasOff + gn]; }
        if ((p.flags & 2u) != 0u) { v += res[at]; }
        if ((p.flags & 4u) != 0u) { v += c[at]; }
        c[at] = v;
      }
    }
  }
}
