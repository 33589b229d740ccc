// Element-wise and small reduction kernels of the ViT: GELU (the tanh approximation, or exact with
// erf as timm's ViTs use it) forward and backward, column sums for bias gradients, and the row softmax of attention with its backward.
// Large 1-D dispatches are folded into 2-D grids (index = y·stride + x) to stay under the
// 65535-workgroups-per-dimension limit.
struct Params { n: u32, cols: u32, off: u32, stride: u32 }

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

// 1: exact GELU, u·Φ(u) (timm, PyTorch's nn.GELU); 0: the tanh approximation.
override exact_gelu: bool = false;

const GELU_K = 0.7978845608028654; // sqrt(2/π)
const GELU_C = 0.044715;

fn gelu_tanh(u: f32) -> f32 {
  // tanh via exp of a clamped argument: WGSL's tanh may return NaN for large |x| on some drivers.
  let z = clamp(GELU_K * (u + GELU_C * u * u * u), -15.0, 15.0);
  let e = exp(2.0 * z);
  return (e - 1.0) / (e + 1.0);
}

// Abramowitz and Stegun 7.1.26: absolute error under 1.5e-7, below f32's resolution near 1.
// reference-ops.ts uses the same formula.
fn erf_as(x: f32) -> f32 {
  let z = abs(x);
  let t = 1.0 / (1.0 + 0.3275911 * z);
  let poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t;
  return sign(x) * (1.0 - poly * exp(-z * z));
}

const INV_SQRT2 = 0.7071067811865476;
const INV_SQRT_2PI = 0.3989422804014327;

@compute @workgroup_size(256)
fn gelu_forward(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.y * p.stride + gid.x;
  if (i >= p.n) { return; }
  let u = src[i];
  if (exact_gelu) {
    dst[i] = 0.5 * u * (1.0 + erf_as(u * INV_SQRT2));
  } else {
    dst[i] = 0.5 * u * (1.0 + gelu_tanh(u));
  }
}

// dst (dL/da on entry) becomes dL/du = dL/da · gelu'(u), with u = src.
@compute @workgroup_size(256)
fn gelu_backward(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.y * p.stride + gid.x;
  if (i >= p.n) { return; }
  let u = src[i];
  if (exact_gelu) {
    dst[i] *= 0.5 * (1.0 + erf_as(u * INV_SQRT2)) + u * exp(-0.5 * u * u) * INV_SQRT_2PI;
  } else {
    let t = gelu_tanh(u);
    dst[i] *= 0.5 * (1.0 + t) + 0.5 * u * (1.0 - t * t) * GELU_K * (1.0 + 3.0 * GELU_C * u * u);
  }
}

// dst[off + c] = Σ_r src[r·cols + c] over n rows: bias gradients.
@compute @workgroup_size(64)
fn col_sum(@builtin(global_invocation_id) gid: vec3u) {
  let c = gid.x;
  if (c >= p.cols) { return; }
  var s = 0.0;
  for (var r = 0u; r < p.n; r++) { s += src[r * p.cols + c]; }
  dst[p.off + c] = s;
}

// In-place row softmax over n rows of `cols` scores (the 1/√d scale is applied by the matmul).
@compute @workgroup_size(64)
fn softmax_forward(@builtin(global_invocation_id) gid: vec3u) {
  let r = gid.y * p.stride + gid.x;
  if (r >= p.n) { return; }
  let base = r * p.cols;
  var m = -3.4e38;
  for (var i = 0u; i < p.cols; i++) { m = max(m, dst[base + i]); }
  var s = 0.0;
  for (var i = 0u; i < p.cols; i++) { let e = exp(dst[base + i] - m); dst[base + i] = e; s += e; }
  let inv = 1.0 / s;
  for (var i = 0u; i < p.cols; i++) { dst[base + i] *= inv; }
}

// dst (dL/dP on entry) becomes dL/dS = P ⊙ (dP − rowsum(dP ⊙ P)), with P = src.
@compute @workgroup_size(64)
fn softmax_backward(@builtin(global_invocation_id) gid: vec3u) {
  let r = gid.y * p.stride + gid.x;
  if (r >= p.n) { return; }
  let base = r * p.cols;
  var dot = 0.0;
  for (var i = 0u; i < p.cols; i++) { dot += dst[base + i] * src[base + i]; }
  for (var i = 0u; i < p.cols; i++) { dst[base + i] = src[base + i] * (dst[base + i] - dot); }
}
