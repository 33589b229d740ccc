// The CPU reference ViT in f64: forward, hand-written backward, and AdamW with warmup + cosine
// schedule and global-norm clipping. Parameters and gradients use the flat layout of config.ts, so
// they compare element for element with the GPU trainer's buffers.
import { invariant } from '../errors/index.ts';
import { dims, layerNormEps, learningRate, paramLayout, type ParamLayout, type TrainConfig, type ViTConfig } from './config.ts';
import {
  addBias,
  colSum,
  crossEntropy,
  gelu,
  geluErf,
  geluErfGrad,
  geluGrad,
  layerNorm,
  layerNormBackward,
  matmul,
  softmaxBackward,
  softmaxRows,
  type F64,
  type LnCache,
} from './reference-ops.ts';

/** Images [B, C, H, W] → patch rows [B·patches, C·p·p], each row ordered (channel, y, x). */
export function patchify(images: ArrayLike<number>, c: ViTConfig, B: number): F64 {
  const d = dims(c);
  const p = c.patchSize;
  const S = c.imageSize;
  const out = new Float64Array(B * d.patches * d.patchDim);
  for (let b = 0; b < B; b++)
    for (let gy = 0; gy < d.grid; gy++)
      for (let gx = 0; gx < d.grid; gx++) {
        const row = (b * d.patches + gy * d.grid + gx) * d.patchDim;
        for (let ch = 0; ch < c.channels; ch++)
          for (let y = 0; y < p; y++)
            for (let x = 0; x < p; x++)
              out[row + (ch * p + y) * p + x] = images[((b * c.channels + ch) * S + gy * p + y) * S + gx * p + x]!;
      }
  return out;
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

export interface ForwardResult {
  loss: number;
  correct: number;
  logits: F64;
  cache: { patches: F64; blocks: BlockCache[]; xc: F64; y: F64; lnf: LnCache; dlogits: F64 };
}

export class ReferenceViT {
  readonly layout: ParamLayout;
  readonly #gelu: (u: number) => number;
  readonly #geluGrad: (u: number) => number;
  constructor(readonly config: ViTConfig) {
    this.layout = paramLayout(config);
    const exact = config.gelu === 'erf';
    this.#gelu = exact ? geluErf : gelu;
    this.#geluGrad = exact ? geluErfGrad : geluGrad;
  }

  /** A view of one named tensor in a flat parameter (or gradient) array. */
  view<T extends F64 | Float32Array>(flat: T, name: string): T {
    const t = this.layout.byName.get(name);
    invariant(t, `vit: no tensor ${name}`);
    return flat.subarray(t.offset, t.offset + t.size) as T;
  }

  forward(params: F64, images: ArrayLike<number>, labels: ArrayLike<number>, B: number): ForwardResult {
    const c = this.config;
    const d = dims(c);
    const D = c.width;
    const eps = layerNormEps(c);
    const T = d.tokens;
    const R = B * T;
    const P = (n: string) => this.view(params, n);
    const patches = patchify(images, c, B);
    const pe = addBias(matmul(patches, P('patch.w'), B * d.patches, d.patchDim, D), P('patch.b'), B * d.patches, D);
    let x: F64 = new Float64Array(R * D);
    const cls = P('cls');
    const pos = P('pos');
    for (let b = 0; b < B; b++)
      for (let t = 0; t < T; t++)
        for (let i = 0; i < D; i++) x[(b * T + t) * D + i] = pos[t * D + i]! + (t === 0 ? cls[i]! : pe[(b * d.patches + t - 1) * D + i]!);
    const blocks: BlockCache[] = [];
    const H = c.heads;
    const hd = d.headDim;
    for (let l = 0; l < c.depth; l++) {
      const w = (n: string) => P(`b${l}.${n}`);
      const xin = x;
      const { y: h1, ...ln1 } = layerNorm(xin, w('ln1.g'), w('ln1.b'), R, D, eps);
      const qkv = addBias(matmul(h1, w('qkv.w'), R, D, 3 * D), w('qkv.b'), R, 3 * D);
      const probs = new Float64Array(B * H * T * T);
      const o = new Float64Array(R * D);
      for (let b = 0; b < B; b++)
        for (let h = 0; h < H; h++) {
          const s = probs.subarray((b * H + h) * T * T, (b * H + h + 1) * T * T);
          for (let i = 0; i < T; i++)
            for (let j = 0; j < T; j++) {
              let dot = 0;
              for (let k = 0; k < hd; k++) dot += qkv[(b * T + i) * 3 * D + h * hd + k]! * qkv[(b * T + j) * 3 * D + D + h * hd + k]!;
              s[i * T + j] = dot;
            }
          softmaxRows(s, T, T, 1 / Math.sqrt(hd));
          for (let i = 0; i < T; i++)
            for (let k = 0; k < hd; k++) {
              let acc = 0;
              for (let j = 0; j < T; j++) acc += s[i * T + j]! * qkv[(b * T + j) * 3 * D + 2 * D + h * hd + k]!;
              o[(b * T + i) * D + h * hd + k] = acc;
            }
        }
      const xmid = addBias(matmul(o, w('proj.w'), R, D, D), w('proj.b'), R, D);
      for (let i = 0; i < R * D; i++) xmid[i]! += xin[i]!;
      const { y: h2, ...ln2 } = layerNorm(xmid, w('ln2.g'), w('ln2.b'), R, D, eps);
      const u = addBias(matmul(h2, w('fc1.w'), R, D, d.hidden), w('fc1.b'), R, d.hidden);
      const a = u.map(this.#gelu);
      x = addBias(matmul(a, w('fc2.w'), R, d.hidden, D), w('fc2.b'), R, D);
      for (let i = 0; i < R * D; i++) x[i]! += xmid[i]!;
      blocks.push({ xin, h1, ln1, qkv, probs, o, xmid, h2, ln2, u, a });
    }
    const xc = new Float64Array(B * D);
    for (let b = 0; b < B; b++) xc.set(x.subarray(b * T * D, b * T * D + D), b * D);
    const { y, ...lnf } = layerNorm(xc, P('lnf.g'), P('lnf.b'), B, D, eps);
    const logits = addBias(matmul(y, P('head.w'), B, D, c.classes), P('head.b'), B, c.classes);
    const ce = crossEntropy(logits, labels, B, c.classes);
    return { loss: ce.loss, correct: ce.correct, logits, cache: { patches, blocks, xc, y, lnf, dlogits: ce.dlogits } };
  }

  /** Gradients of the mean loss with respect to every parameter, in the flat layout. */
  backward(params: F64, fwd: ForwardResult, B: number): F64 {
    const c = this.config;
    const d = dims(c);
    const D = c.width;
    const T = d.tokens;
    const R = B * T;
    const H = c.heads;
    const hd = d.headDim;
    const grads = new Float64Array(this.layout.size);
    const P = (n: string) => this.view(params, n);
    const G = (n: string) => this.view(grads, n);
    const { cache } = fwd;
    matmul(cache.y, cache.dlogits, D, B, c.classes, true, false, G('head.w'));
    colSum(cache.dlogits, B, c.classes, G('head.b'));
    const dy = matmul(cache.dlogits, P('head.w'), B, c.classes, D, false, true);
    const dxc = new Float64Array(B * D);
    layerNormBackward(dy, cache.xc, P('lnf.g'), cache.lnf, B, D, dxc, G('lnf.g'), G('lnf.b'));
    const dx = new Float64Array(R * D);
    for (let b = 0; b < B; b++) dx.set(dxc.subarray(b * D, b * D + D), b * T * D);
    for (let l = c.depth - 1; l >= 0; l--) {
      const k = cache.blocks[l]!;
      const w = (n: string) => P(`b${l}.${n}`);
      const g = (n: string) => G(`b${l}.${n}`);
      // MLP branch: x_out = x_mid + gelu(LN2(x_mid)·W1 + b1)·W2 + b2
      matmul(k.a, dx, d.hidden, R, D, true, false, g('fc2.w'));
      colSum(dx, R, D, g('fc2.b'));
      const du = matmul(dx, w('fc2.w'), R, D, d.hidden, false, true);
      for (let i = 0; i < du.length; i++) du[i]! *= this.#geluGrad(k.u[i]!);
      matmul(k.h2, du, D, R, d.hidden, true, false, g('fc1.w'));
      colSum(du, R, d.hidden, g('fc1.b'));
      const dh2 = matmul(du, w('fc1.w'), R, d.hidden, D, false, true);
      layerNormBackward(dh2, k.xmid, w('ln2.g'), k.ln2, R, D, dx, g('ln2.g'), g('ln2.b'));
      // Attention branch: x_mid = x_in + attn(LN1(x_in))·Wo + bo
      matmul(k.o, dx, D, R, D, true, false, g('proj.w'));
      colSum(dx, R, D, g('proj.b'));
      const dO = matmul(dx, w('proj.w'), R, D, D, false, true);
      const dqkv = new Float64Array(R * 3 * D);
      const scale = 1 / Math.sqrt(hd);
      for (let b = 0; b < B; b++)
        for (let h = 0; h < H; h++) {
          const p = k.probs.subarray((b * H + h) * T * T, (b * H + h + 1) * T * T);
          const q = (i: number, e: number) => (b * T + i) * 3 * D + h * hd + e;
          const dp = new Float64Array(T * T);
          for (let i = 0; i < T; i++)
            for (let j = 0; j < T; j++) {
              let s = 0;
              for (let e = 0; e < hd; e++) s += dO[(b * T + i) * D + h * hd + e]! * k.qkv[q(j, 2 * D + e)]!;
              dp[i * T + j] = s;
            }
          for (let j = 0; j < T; j++)
            for (let e = 0; e < hd; e++) {
              let s = 0;
              for (let i = 0; i < T; i++) s += p[i * T + j]! * dO[(b * T + i) * D + h * hd + e]!;
              dqkv[q(j, 2 * D + e)] = s;
            }
          softmaxBackward(p, dp, T, T);
          for (let i = 0; i < T; i++)
            for (let e = 0; e < hd; e++) {
              let sq = 0;
              let sk = 0;
              for (let j = 0; j < T; j++) {
                sq += dp[i * T + j]! * k.qkv[q(j, D + e)]!;
                sk += dp[j * T + i]! * k.qkv[q(j, e)]!;
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
    const dcls = G('cls');
    const dpos = G('pos');
    const dpe = new Float64Array(B * d.patches * D);
    for (let b = 0; b < B; b++)
      for (let t = 0; t < T; t++)
        for (let i = 0; i < D; i++) {
          const v = dx[(b * T + t) * D + i]!;
          dpos[t * D + i]! += v;
          if (t === 0) dcls[i]! += v;
          else dpe[(b * d.patches + t - 1) * D + i] = v;
        }
    matmul(cache.patches, dpe, d.patchDim, B * d.patches, D, true, false, G('patch.w'));
    colSum(dpe, B * d.patches, D, G('patch.b'));
    return grads;
  }
}

export interface AdamState {
  m: F64;
  v: F64;
  step: number;
}

/** Global L2 norm of the gradients and the factor that clips it to `clipNorm` (1 when disabled). */
export function clipScale(grads: ArrayLike<number>, clipNorm: number): { norm: number; scale: number } {
  let s = 0;
  for (let i = 0; i < grads.length; i++) s += grads[i]! * grads[i]!;
  const norm = Math.sqrt(s);
  return { norm, scale: clipNorm > 0 ? Math.min(1, clipNorm / (norm + 1e-6)) : 1 };
}

/** One AdamW step in place (decoupled weight decay on elements [0, decayEnd)); returns the lr used. */
export function adamwStep(params: F64, grads: ArrayLike<number>, state: AdamState, t: TrainConfig, decayEnd: number): number {
  const { scale } = clipScale(grads, t.clipNorm);
  state.step += 1;
  const lr = learningRate(t, state.step);
  const bc1 = 1 - t.beta1 ** state.step;
  const bc2 = 1 - t.beta2 ** state.step;
  for (let i = 0; i < params.length; i++) {
    const g = grads[i]! * scale;
    const m = (state.m[i] = t.beta1 * state.m[i]! + (1 - t.beta1) * g);
    const v = (state.v[i] = t.beta2 * state.v[i]! + (1 - t.beta2) * g * g);
    const decay = i < decayEnd ? t.weightDecay * params[i]! : 0;
    params[i]! -= lr * (m / bc1 / (Math.sqrt(v / bc2) + t.eps) + decay);
  }
  return lr;
}
