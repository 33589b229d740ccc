// Plain f64 building blocks of the CPU reference ViT: the ground truth the WGSL kernels are tested
// against, written for clarity rather than speed. Matrices are row-major.

export type F64 = Float64Array;

/** out[M,N] (+)= a[M,K] · b[K,N]; `ta`: a is stored [K,M]; `tb`: b is stored [N,K]. */
export function matmul(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  M: number,
  K: number,
  N: number,
  ta = false,
  tb = false,
  out = new Float64Array(M * N),
  accumulate = false,
  alpha = 1,
): F64 {
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      let s = 0;
      for (let k = 0; k < K; k++) {
        const av = ta ? a[k * M + m]! : a[m * K + k]!;
        const bv = tb ? b[n * K + k]! : b[k * N + n]!;
        s += av * bv;
      }
      out[m * N + n] = alpha * s + (accumulate ? out[m * N + n]! : 0);
    }
  }
  return out;
}

export function addBias(x: F64, bias: ArrayLike<number>, rows: number, cols: number): F64 {
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) x[r * cols + c]! += bias[c]!;
  return x;
}

/** Column sums of x[rows, cols] (bias gradients), written to out (or added to it). */
export function colSum(x: ArrayLike<number>, rows: number, cols: number, out: F64 | Float32Array, accumulate = false): void {
  for (let c = 0; c < cols; c++) {
    let s = 0;
    for (let r = 0; r < rows; r++) s += x[r * cols + c]!;
    out[c] = s + (accumulate ? out[c]! : 0);
  }
}

export const LN_EPS = 1e-5;

export interface LnCache {
  mean: F64;
  rstd: F64;
}

export function layerNorm(
  x: ArrayLike<number>,
  g: ArrayLike<number>,
  b: ArrayLike<number>,
  rows: number,
  D: number,
  eps = LN_EPS,
): { y: F64 } & LnCache {
  const y = new Float64Array(rows * D);
  const mean = new Float64Array(rows);
  const rstd = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let mu = 0;
    for (let i = 0; i < D; i++) mu += x[r * D + i]!;
    mu /= D;
    let v = 0;
    for (let i = 0; i < D; i++) v += (x[r * D + i]! - mu) ** 2;
    const rs = 1 / Math.sqrt(v / D + eps);
    mean[r] = mu;
    rstd[r] = rs;
    for (let i = 0; i < D; i++) y[r * D + i] = (x[r * D + i]! - mu) * rs * g[i]! + b[i]!;
  }
  return { y, mean, rstd };
}

/** Adds the input gradient to dx and writes the gain and bias gradients to dg, db. */
export function layerNormBackward(
  dy: ArrayLike<number>,
  x: ArrayLike<number>,
  g: ArrayLike<number>,
  c: LnCache,
  rows: number,
  D: number,
  dx: F64,
  dg: F64,
  db: F64,
): void {
  dg.fill(0);
  db.fill(0);
  for (let r = 0; r < rows; r++) {
    const mu = c.mean[r]!;
    const rs = c.rstd[r]!;
    let sum = 0;
    let sumXhat = 0;
    for (let i = 0; i < D; i++) {
      const xhat = (x[r * D + i]! - mu) * rs;
      const dxhat = dy[r * D + i]! * g[i]!;
      sum += dxhat;
      sumXhat += dxhat * xhat;
      dg[i]! += dy[r * D + i]! * xhat;
      db[i]! += dy[r * D + i]!;
    }
    for (let i = 0; i < D; i++) {
      const xhat = (x[r * D + i]! - mu) * rs;
      const dxhat = dy[r * D + i]! * g[i]!;
      dx[r * D + i]! += rs * (dxhat - sum / D - (xhat * sumXhat) / D);
    }
  }
}

const GELU_K = Math.sqrt(2 / Math.PI);
const GELU_C = 0.044715;

export function gelu(u: number): number {
  return 0.5 * u * (1 + Math.tanh(GELU_K * (u + GELU_C * u * u * u)));
}

export function geluGrad(u: number): number {
  const t = Math.tanh(GELU_K * (u + GELU_C * u * u * u));
  return 0.5 * (1 + t) + 0.5 * u * (1 - t * t) * GELU_K * (1 + 3 * GELU_C * u * u);
}

// erf by Abramowitz and Stegun 7.1.26 (absolute error under 1.5e-7), the same formula as
// elementwise.wgsl, so the reference and the GPU differ only by f64 against f32.
const ERF_P = 0.3275911;
const ERF_A = [0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429] as const;

export function erf(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + ERF_P * z);
  const poly = ((((ERF_A[4] * t + ERF_A[3]) * t + ERF_A[2]) * t + ERF_A[1]) * t + ERF_A[0]) * t;
  const y = 1 - poly * Math.exp(-z * z);
  return x < 0 ? -y : y;
}

/** Exact GELU: u·Φ(u). */
export function geluErf(u: number): number {
  return 0.5 * u * (1 + erf(u * Math.SQRT1_2));
}

/** d/du u·Φ(u) = Φ(u) + u·φ(u). */
export function geluErfGrad(u: number): number {
  return 0.5 * (1 + erf(u * Math.SQRT1_2)) + (u * Math.exp(-0.5 * u * u)) / Math.sqrt(2 * Math.PI);
}

/** Row softmax in place over x[rows, n], after multiplying by `scale`. */
export function softmaxRows(x: F64, rows: number, n: number, scale = 1): void {
  for (let r = 0; r < rows; r++) {
    let max = -Infinity;
    for (let i = 0; i < n; i++) max = Math.max(max, x[r * n + i]! * scale);
    let s = 0;
    for (let i = 0; i < n; i++) s += x[r * n + i] = Math.exp(x[r * n + i]! * scale - max);
    for (let i = 0; i < n; i++) x[r * n + i]! /= s;
  }
}

/** dS = P ⊙ (dP − rowsum(dP ⊙ P)), in place over dP. */
export function softmaxBackward(p: ArrayLike<number>, dp: F64, rows: number, n: number): void {
  for (let r = 0; r < rows; r++) {
    let dot = 0;
    for (let i = 0; i < n; i++) dot += dp[r * n + i]! * p[r * n + i]!;
    for (let i = 0; i < n; i++) dp[r * n + i] = p[r * n + i]! * (dp[r * n + i]! - dot);
  }
}

export interface CrossEntropy {
  /** Mean loss (0 when no row is labelled). */
  loss: number;
  correct: number;
  /** Labelled rows: label in [0, K). */
  count: number;
  /** dLoss/dlogits. */
  dlogits: F64;
}

/**
 * Softmax cross-entropy of B rows of K logits, its mean over the B rows (the ViT's: a padded batch
 * keeps its scale) or over the labelled ones (the GPT's); a row whose label is outside [0, K) has
 * no loss and no gradient.
 */
export function crossEntropy(
  logits: ArrayLike<number>,
  labels: ArrayLike<number>,
  B: number,
  K: number,
  mean: 'rows' | 'labelled' = 'rows',
): CrossEntropy {
  const dlogits = new Float64Array(B * K);
  const labelled = (y: number) => y >= 0 && y < K;
  let count = 0;
  for (let b = 0; b < B; b++) if (labelled(labels[b] as number)) count++;
  const n = mean === 'rows' ? B : count;
  let loss = 0;
  let correct = 0;
  for (let b = 0; b < B; b++) {
    const y = labels[b] as number;
    if (!labelled(y)) continue;
    let max = -Infinity;
    let arg = 0;
    for (let k = 0; k < K; k++) if ((logits[b * K + k] as number) > max) [max, arg] = [logits[b * K + k] as number, k];
    let s = 0;
    for (let k = 0; k < K; k++) s += Math.exp((logits[b * K + k] as number) - max);
    loss += Math.log(s) + max - (logits[b * K + y] as number);
    if (arg === y) correct++;
    for (let k = 0; k < K; k++) dlogits[b * K + k] = (Math.exp((logits[b * K + k] as number) - max) / s - (k === y ? 1 : 0)) / n;
  }
  return { loss: n ? loss / n : 0, correct, count, dlogits };
}
