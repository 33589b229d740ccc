// The CPU reference ViT in f64: forward, hand-written backward, and AdamW with warmup + cosine
// schedule and global-norm clipping (the blocks are reference-blocks.ts, the GPT's too). Parameters
// and gradients use the flat layout of config.ts, so they compare element for element with the GPU
// trainer's buffers.
import { invariant } from '../errors/index.ts';
import { dims, layerNormEps, learningRate, paramLayout, type ParamLayout, type TrainConfig, type ViTConfig } from './config.ts';
import { type BlockCache, type BlockShape, blocksBackward, blocksForward } from './reference-blocks.ts';
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

  #blockShape(B: number): BlockShape {
    const c = this.config;
    const d = dims(c);
    const [gelu, geluGrad] = [this.#gelu, this.#geluGrad];
    return { depth: c.depth, B, T: d.tokens, D: c.width, H: c.heads, hidden: d.hidden, eps: layerNormEps(c), gelu, geluGrad };
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
    const x: F64 = new Float64Array(R * D);
    const cls = P('cls');
    const pos = P('pos');
    for (let b = 0; b < B; b++)
      for (let t = 0; t < T; t++)
        for (let i = 0; i < D; i++) x[(b * T + t) * D + i] = pos[t * D + i]! + (t === 0 ? cls[i]! : pe[(b * d.patches + t - 1) * D + i]!);
    const { out, blocks } = blocksForward(P, x, this.#blockShape(B));
    const xc = new Float64Array(B * D);
    for (let b = 0; b < B; b++) xc.set(out.subarray(b * T * D, b * T * D + D), b * D);
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
    blocksBackward(P, G, cache.blocks, dx, this.#blockShape(B));
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
