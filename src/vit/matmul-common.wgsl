// What both matmul kernels share, prepended to each by Kernels.create (WGSL has no includes): the
// layout overrides, the uniform parameters and the bindings.
// TRANS_A / TRANS_B pick the stored layout (A as [K,M], B as [N,K]) at pipeline creation, so one
// source gives A·B, Aᵀ·B and A·Bᵀ. A batch index z is split as (outer, inner) = (z / inner,
// z % inner) with separate strides: (image, head) for attention.
override TRANS_A: bool = false;
override TRANS_B: bool = false;

struct Params {
  M: u32, N: u32, K: u32, inner: u32,
  lda: u32, ldb: u32, ldc: u32, flags: u32, // flags: 1 bias, 2 residual R, 4 accumulate into C
  offA: u32, offB: u32, offC: u32, alpha: f32,
  sA1: u32, sA2: u32, sB1: u32, sB2: u32,
  sC1: u32, sC2: u32, biasOff: u32, pad1: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read> res: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;
