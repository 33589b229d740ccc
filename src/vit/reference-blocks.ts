// The pre-LN transformer blocks on the CPU in f64, forward and hand-written backward, shared by
// ReferenceViT and ReferenceGpt (blocks.ts is their GPU twin). Attention is written out as its mask
// defines it, independently of the WGSL's loop bounds: every pair for the ViT, `sees` for the GPT.
import { invariant } from '../errors/index.ts';
import type { BlockDims } from './blocks.ts';
import { addBias, colSum, type F64, layerNorm, layerNormBackward, type LnCache, matmul, softmaxBackward } from './reference-ops.ts';

/** An element the loop bounds keep in range (the arrays are sized from the same config). */
export function at(values: ArrayLike<number>, index: number): number {
  return values[index] as number;
}

export interface BlockCache {
  xin: F64;
  h1: F64;
  ln1: LnCache;
  qkv: F64;
  probs: F64;
  o: F64;
  xmid: F64;
  h2: F64;
  ln2: LnCache;
  u: F64;
  a: F64;
}

export interface BlockShape extends BlockDims {
  eps: number;
  gelu: (u: number) => number;
  geluGrad: (u: number) => number;
  /** Whether query i of sequence b attends key j (default: every pair). */
  sees?: (b: number, i: number, j: number) => boolean;
}

/** Runs the blocks over x [B·T, D] with the parameters `w` gives by name; the output and the caches. */
export function blocksForward(w: (name: string) => F64, input: F64, s: BlockShape): { out: F64; blocks: BlockCache[] } {
  const { B, T, D, H, hidden, eps } = s;
  const R = B * T;
  const hd = D / H;
  const scale = 1 / Math.sqrt(hd);
  const sees = s.sees ?? (() => true);
  const blocks: BlockCache[] = [];
  let x = input;
  for (let l = 0; l < s.depth; l++) {
    const p = (n: string) => w(`b${l}.${n}`);
    const xin = x;
    const { y: h1, ...ln1 } = layerNorm(xin, p('ln1.g'), p('ln1.b'), R, D, eps);
    const qkv = addBias(matmul(h1, p('qkv.w'), R, D, 3 * D), p('qkv.b'), R, 3 * D);
    const probs = new Float64Array(B * H * T * T);
    const o = new Float64Array(R * D);
    for (let b = 0; b < B; b++)
      for (let h = 0; h < H; h++) {
        const row = probs.subarray((b * H + h) * T * T, (b * H + h + 1) * T * T);
        for (let i = 0; i < T; i++) {
          let max = -Infinity;
          for (let j = 0; j < T; j++) {
            if (!sees(b, i, j)) continue;
            let dot = 0;
            for (let e = 0; e < hd; e++) dot += at(qkv, (b * T + i) * 3 * D + h * hd + e) * at(qkv, (b * T + j) * 3 * D + D + h * hd + e);
            row[i * T + j] = dot * scale;
            max = Math.max(max, dot * scale);
          }
          let sum = 0;
          for (let j = 0; j < T; j++) {
            const e = sees(b, i, j) ? Math.exp(at(row, i * T + j) - max) : 0;
            row[i * T + j] = e;
            sum += e;
          }
          for (let j = 0; j < T; j++) row[i * T + j] = at(row, i * T + j) / sum;
          for (let e = 0; e < hd; e++) {
            let acc = 0;
            for (let j = 0; j < T; j++) acc += at(row, i * T + j) * at(qkv, (b * T + j) * 3 * D + 2 * D + h * hd + e);
            o[(b * T + i) * D + h * hd + e] = acc;
          }
        }
      }
    const xmid = addBias(matmul(o, p('proj.w'), R, D, D), p('proj.b'), R, D);
    for (let i = 0; i < R * D; i++) xmid[i] = at(xmid, i) + at(xin, i);
    const { y: h2, ...ln2 } = layerNorm(xmid, p('ln2.g'), p('ln2.b'), R, D, eps);
    const u = addBias(matmul(h2, p('fc1.w'), R, D, hidden), p('fc1.b'), R, hidden);
    const a = u.map(s.gelu);
    x = addBias(matmul(a, p('fc2.w'), R, hidden, D), p('fc2.b'), R, D);
    for (let i = 0; i < R * D; i++) x[i] = at(x, i) + at(xmid, i);
    blocks.push({ xin, h1, ln1, qkv, probs, o, xmid, h2, ln2, u, a });
  }
  return { out: x, blocks };
}

/** Turns dx, dL/d(the blocks' output), into dL/d(their input) in place; each gradient into `g`'s view of it. */
export function blocksBackward(
  w: (name: string) => F64,
  g: (name: string) => Float64Array<ArrayBuffer>,
  blocks: BlockCache[],
  dx: F64,
  s: BlockShape,
): void {
  const { B, T, D, H, hidden } = s;
  const R = B * T;
  const hd = D / H;
  const scale = 1 / Math.sqrt(hd);
  for (let l = s.depth - 1; l >= 0; l--) {
    const k = blocks[l];
    invariant(k, `transformer: no cache for block ${l}`);
    const p = (n: string) => w(`b${l}.${n}`);
    const dp = (n: string) => g(`b${l}.${n}`);
    // MLP branch: x_out = x_mid + gelu(LN2(x_mid)·W1 + b1)·W2 + b2
    matmul(k.a, dx, hidden, R, D, true, false, dp('fc2.w'));
    colSum(dx, R, D, dp('fc2.b'));
    const du = matmul(dx, p('fc2.w'), R, D, hidden, false, true);
    for (let i = 0; i < du.length; i++) du[i] = at(du, i) * s.geluGrad(at(k.u, i));
    matmul(k.h2, du, D, R, hidden, true, false, dp('fc1.w'));
    colSum(du, R, hidden, dp('fc1.b'));
    const dh2 = matmul(du, p('fc1.w'), R, hidden, D, false, true);
    layerNormBackward(dh2, k.xmid, p('ln2.g'), k.ln2, R, D, dx, dp('ln2.g'), dp('ln2.b'));
    // Attention branch: x_mid = x_in + attn(LN1(x_in))·Wo + bo
    matmul(k.o, dx, D, R, D, true, false, dp('proj.w'));
    colSum(dx, R, D, dp('proj.b'));
    const dO = matmul(dx, p('proj.w'), R, D, D, false, true);
    const dqkv = new Float64Array(R * 3 * D);
    for (let b = 0; b < B; b++)
      for (let h = 0; h < H; h++) {
        const probs = k.probs.subarray((b * H + h) * T * T, (b * H + h + 1) * T * T);
        const q = (i: number, e: number) => (b * T + i) * 3 * D + h * hd + e;
        const dS = new Float64Array(T * T);
        for (let i = 0; i < T; i++)
          for (let j = 0; j < T; j++) {
            let sum = 0;
            for (let e = 0; e < hd; e++) sum += at(dO, (b * T + i) * D + h * hd + e) * at(k.qkv, q(j, 2 * D + e));
            dS[i * T + j] = sum;
          }
        for (let j = 0; j < T; j++)
          for (let e = 0; e < hd; e++) {
            let sum = 0;
            for (let i = 0; i < T; i++) sum += at(probs, i * T + j) * at(dO, (b * T + i) * D + h * hd + e);
            dqkv[q(j, 2 * D + e)] = sum;
          }
        softmaxBackward(probs, dS, T, T);
        for (let i = 0; i < T; i++)
          for (let e = 0; e < hd; e++) {
            let sq = 0;
            let sk = 0;
            for (let j = 0; j < T; j++) {
              sq += at(dS, i * T + j) * at(k.qkv, q(j, D + e));
              sk += at(dS, j * T + i) * at(k.qkv, q(j, e));
            }
            dqkv[q(i, e)] = sq * scale;
            dqkv[q(i, D + e)] = sk * scale;
          }
      }
    matmul(k.h1, dqkv, D, R, 3 * D, true, false, dp('qkv.w'));
    colSum(dqkv, R, 3 * D, dp('qkv.b'));
    const dh1 = matmul(dqkv, p('qkv.w'), R, 3 * D, D, false, true);
    layerNormBackward(dh1, k.xin, p('ln1.g'), k.ln1, R, D, dx, dp('ln1.g'), dp('ln1.b'));
  }
}
