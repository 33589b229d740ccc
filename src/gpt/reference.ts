// The CPU reference GPT in f64: forward and hand-written backward over the flat layout of
// config.ts, so its logits and gradients compare element for element with GptTrainer's buffers.
// Attention is written out as the mask defines it (j ≤ i, same document id), independently of the
// WGSL's loop bounds. AdamW is the ViT reference's (adamwStep).
import { invariant } from '../errors/index.ts';
import {
  addBias,
  colSum,
  type F64,
  gelu,
  geluGrad,
  layerNorm,
  layerNormBackward,
  type LnCache,
  matmul,
  softmaxBackward,
} from '../vit/internal.ts';
import type { ParamLayout } from '../vit/index.ts';
import { type GptConfig, gptDims, gptParamLayout } from './config.ts';

/** An element the loop bounds keep in range (the arrays are sized from the same config). */
function at(values: ArrayLike<number>, index: number): number {
  return values[index] as number;
}

/** A packed batch on the CPU: each array B × context, as GptBatch's buffers hold it. */
export interface ReferenceBatch {
  inputs: ArrayLike<number>;
  labels: ArrayLike<number>;
  docIds: ArrayLike<number>;
  positions: ArrayLike<number>;
}

interface BlockCache {
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

export interface GptForward {
  /** Mean loss over the labelled positions (0 when none is). */
  loss: number;
  correct: number;
  /** Labelled positions (label in [0, vocabSize)). */
  count: number;
  logits: F64;
  cache: { batch: ReferenceBatch; blocks: BlockCache[]; last: F64; y: F64; lnf: LnCache; dlogits: F64 };
}

export class ReferenceGpt {
  readonly layout: ParamLayout;
  constructor(readonly config: GptConfig) {
    this.layout = gptParamLayout(config);
  }

  /** A view of one named tensor in a flat parameter (or gradient) array. */
  view<T extends F64 | Float32Array>(flat: T, name: string): T {
    const t = this.layout.byName.get(name);
    invariant(t, `gpt: no tensor ${name}`);
    return flat.subarray(t.offset, t.offset + t.size) as T;
  }

  /** Whether query i of row b attends key j: causal, within one document. */
  static sees(docIds: ArrayLike<number>, T: number, b: number, i: number, j: number): boolean {
    return j <= i && docIds[b * T + j] === docIds[b * T + i];
  }

  forward(params: F64, batch: ReferenceBatch, B: number): GptForward {
    const c = this.config;
    const d = gptDims(c);
    const [D, T, V, H, hd] = [c.width, c.context, c.vocabSize, c.heads, d.headDim];
    const R = B * T;
    const P = (n: string) => this.view(params, n);
    const wte = P('wte');
    const wpe = P('wpe');
    let x: F64 = new Float64Array(R * D);
    for (let r = 0; r < R; r++) {
      const token = at(batch.inputs, r);
      const position = at(batch.positions, r);
      for (let i = 0; i < D; i++) {
        const te = token >= 0 && token < V ? at(wte, token * D + i) : 0;
        const pe = position >= 0 && position < T ? at(wpe, position * D + i) : 0;
        x[r * D + i] = te + pe;
      }
    }
    const blocks: BlockCache[] = [];
    const scale = 1 / Math.sqrt(hd);
    for (let l = 0; l < c.depth; l++) {
      const w = (n: string) => P(`b${l}.${n}`);
      const xin = x;
      const { y: h1, ...ln1 } = layerNorm(xin, w('ln1.g'), w('ln1.b'), R, D);
      const qkv = addBias(matmul(h1, w('qkv.w'), R, D, 3 * D), w('qkv.b'), R, 3 * D);
      const probs = new Float64Array(B * H * T * T);
      const o = new Float64Array(R * D);
      for (let b = 0; b < B; b++)
        for (let h = 0; h < H; h++) {
          const s = probs.subarray((b * H + h) * T * T, (b * H + h + 1) * T * T);
          for (let i = 0; i < T; i++) {
            let max = -Infinity;
            for (let j = 0; j < T; j++) {
              if (!ReferenceGpt.sees(batch.docIds, T, b, i, j)) continue;
              let dot = 0;
              for (let e = 0; e < hd; e++) dot += at(qkv, (b * T + i) * 3 * D + h * hd + e) * at(qkv, (b * T + j) * 3 * D + D + h * hd + e);
              s[i * T + j] = dot * scale;
              max = Math.max(max, dot * scale);
            }
            let sum = 0;
            for (let j = 0; j < T; j++) {
              const e = ReferenceGpt.sees(batch.docIds, T, b, i, j) ? Math.exp(at(s, i * T + j) - max) : 0;
              s[i * T + j] = e;
              sum += e;
            }
            for (let j = 0; j < T; j++) s[i * T + j] = at(s, i * T + j) / sum;
            for (let e = 0; e < hd; e++) {
              let acc = 0;
              for (let j = 0; j < T; j++) acc += at(s, i * T + j) * at(qkv, (b * T + j) * 3 * D + 2 * D + h * hd + e);
              o[(b * T + i) * D + h * hd + e] = acc;
            }
          }
        }
      const xmid = addBias(matmul(o, w('proj.w'), R, D, D), w('proj.b'), R, D);
      for (let i = 0; i < R * D; i++) xmid[i] = at(xmid, i) + at(xin, i);
      const { y: h2, ...ln2 } = layerNorm(xmid, w('ln2.g'), w('ln2.b'), R, D);
      const u = addBias(matmul(h2, w('fc1.w'), R, D, d.hidden), w('fc1.b'), R, d.hidden);
      const a = u.map(gelu);
      x = addBias(matmul(a, w('fc2.w'), R, d.hidden, D), w('fc2.b'), R, D);
      for (let i = 0; i < R * D; i++) x[i] = at(x, i) + at(xmid, i);
      blocks.push({ xin, h1, ln1, qkv, probs, o, xmid, h2, ln2, u, a });
    }
    const { y, ...lnf } = layerNorm(x, P('lnf.g'), P('lnf.b'), R, D);
    const logits = matmul(y, wte, R, D, V, false, true);
    const { loss, correct, count, dlogits } = labelledCrossEntropy(logits, batch.labels, R, V);
    return { loss, correct, count, logits, cache: { batch, blocks, last: x, y, lnf, dlogits } };
  }

  /** Gradients of the mean loss with respect to every parameter, in the flat layout. */
  backward(params: F64, fwd: GptForward, B: number): F64 {
    const c = this.config;
    const d = gptDims(c);
    const [D, T, V, H, hd] = [c.width, c.context, c.vocabSize, c.heads, d.headDim];
    const R = B * T;
    const grads = new Float64Array(this.layout.size);
    const P = (n: string) => this.view(params, n);
    const G = (n: string) => this.view(grads, n);
    const { cache } = fwd;
    const { batch } = cache;
    // Tied head: logits = y · wteᵀ, so dwte gets dlogitsᵀ · y here and the embedding's part below.
    matmul(cache.dlogits, cache.y, V, R, D, true, false, G('wte'));
    const dy = matmul(cache.dlogits, P('wte'), R, V, D);
    const dx = new Float64Array(R * D);
    layerNormBackward(dy, cache.last, P('lnf.g'), cache.lnf, R, D, dx, G('lnf.g'), G('lnf.b'));
    const scale = 1 / Math.sqrt(hd);
    for (let l = c.depth - 1; l >= 0; l--) {
      const k = cache.blocks[l];
      invariant(k, `gpt: no cache for block ${l}`);
      const w = (n: string) => P(`b${l}.${n}`);
      const g = (n: string) => G(`b${l}.${n}`);
      matmul(k.a, dx, d.hidden, R, D, true, false, g('fc2.w'));
      colSum(dx, R, D, g('fc2.b'));
      const du = matmul(dx, w('fc2.w'), R, D, d.hidden, false, true);
      for (let i = 0; i < du.length; i++) du[i] = at(du, i) * geluGrad(at(k.u, i));
      matmul(k.h2, du, D, R, d.hidden, true, false, g('fc1.w'));
      colSum(du, R, d.hidden, g('fc1.b'));
      const dh2 = matmul(du, w('fc1.w'), R, d.hidden, D, false, true);
      layerNormBackward(dh2, k.xmid, w('ln2.g'), k.ln2, R, D, dx, g('ln2.g'), g('ln2.b'));
      matmul(k.o, dx, D, R, D, true, false, g('proj.w'));
      colSum(dx, R, D, g('proj.b'));
      const dO = matmul(dx, w('proj.w'), R, D, D, false, true);
      const dqkv = new Float64Array(R * 3 * D);
      for (let b = 0; b < B; b++)
        for (let h = 0; h < H; h++) {
          const p = k.probs.subarray((b * H + h) * T * T, (b * H + h + 1) * T * T);
          const q = (i: number, e: number) => (b * T + i) * 3 * D + h * hd + e;
          const dp = new Float64Array(T * T);
          for (let i = 0; i < T; i++)
            for (let j = 0; j < T; j++) {
              let s = 0;
              for (let e = 0; e < hd; e++) s += at(dO, (b * T + i) * D + h * hd + e) * at(k.qkv, q(j, 2 * D + e));
              dp[i * T + j] = s;
            }
          for (let j = 0; j < T; j++)
            for (let e = 0; e < hd; e++) {
              let s = 0;
              for (let i = 0; i < T; i++) s += at(p, i * T + j) * at(dO, (b * T + i) * D + h * hd + e);
              dqkv[q(j, 2 * D + e)] = s;
            }
          softmaxBackward(p, dp, T, T);
          for (let i = 0; i < T; i++)
            for (let e = 0; e < hd; e++) {
              let sq = 0;
              let sk = 0;
              for (let j = 0; j < T; j++) {
                sq += at(dp, i * T + j) * at(k.qkv, q(j, D + e));
                sk += at(dp, j * T + i) * at(k.qkv, q(j, e));
              }
              dqkv[q(i, e)] = sq * scale;
              dqkv[q(i, D + e)] = sk * scale;
            }
        }
      matmul(k.h1, dqkv, D, R, 3 * D, true, false, g('qkv.w'));
      colSum(dqkv, R, 3 * D, g('qkv.b'));
      const dh1 = matmul(dqkv, w('qkv.w'), R, 3 * D, D, false, true);
      layerNormBackward(dh1, k.xin, w('ln1.g'), k.ln1, R, D, dx, g('ln1.g'), g('ln1.b'));
    }
    const dwte = G('wte');
    const dwpe = G('wpe');
    for (let r = 0; r < R; r++) {
      const token = at(batch.inputs, r);
      const position = at(batch.positions, r);
      for (let i = 0; i < D; i++) {
        if (token >= 0 && token < V) dwte[token * D + i] = at(dwte, token * D + i) + at(dx, r * D + i);
        if (position >= 0 && position < T) dwpe[position * D + i] = at(dwpe, position * D + i) + at(dx, r * D + i);
      }
    }
    return grads;
  }
}

/** Mean softmax cross-entropy over the rows whose label is in [0, V); others get no gradient. */
export function labelledCrossEntropy(
  logits: ArrayLike<number>,
  labels: ArrayLike<number>,
  rows: number,
  V: number,
): { loss: number; correct: number; count: number; dlogits: F64 } {
  const dlogits = new Float64Array(rows * V);
  let count = 0;
  for (let r = 0; r < rows; r++) if (at(labels, r) >= 0 && at(labels, r) < V) count++;
  let loss = 0;
  let correct = 0;
  for (let r = 0; r < rows; r++) {
    const y = at(labels, r);
    if (!(y >= 0 && y < V)) continue;
    let max = -Infinity;
    let arg = 0;
    for (let k = 0; k < V; k++) if (at(logits, r * V + k) > max) [max, arg] = [at(logits, r * V + k), k];
    let s = 0;
    for (let k = 0; k < V; k++) s += Math.exp(at(logits, r * V + k) - max);
    loss += Math.log(s) + max - at(logits, r * V + y);
    if (arg === y) correct++;
    for (let k = 0; k < V; k++) dlogits[r * V + k] = (Math.exp(at(logits, r * V + k) - max) / s - (k === y ? 1 : 0)) / count;
  }
  return { loss: count ? loss / count : 0, correct, count, dlogits };
}
