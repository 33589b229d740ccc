// The CPU reference GPT in f64: forward and hand-written backward over the flat layout of
// config.ts, so its logits and gradients compare element for element with GptTrainer's buffers.
// The blocks are the ViT reference's (reference-blocks.ts), with the mask `sees` (j ≤ i, same
// document id); AdamW is the ViT reference's too (adamwStep).
import { invariant } from '../errors/index.ts';
import {
  at,
  crossEntropy,
  type BlockCache,
  type BlockShape,
  blocksBackward,
  blocksForward,
  type F64,
  gelu,
  geluErf,
  geluErfGrad,
  geluGrad,
  layerNorm,
  layerNormBackward,
  LN_EPS,
  type LnCache,
  matmul,
} from '../vit/internal.ts';
import type { ParamLayout } from '../vit/index.ts';
import { type GptConfig, gptDims, gptParamLayout } from './config.ts';

/** A packed batch on the CPU: each array B × context, as GptBatch's buffers hold it. */
export interface ReferenceBatch {
  inputs: ArrayLike<number>;
  labels: ArrayLike<number>;
  docIds: ArrayLike<number>;
  positions: ArrayLike<number>;
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

/**
 * What the reference computes differently from the GPU's GPT when asked: the tests' positive
 * controls, showing that the step check fails on a GELU-form or LayerNorm-ε slip.
 */
export interface ReferenceVariant {
  /** Default 'tanh', as the GPT's WGSL computes it. */
  gelu?: 'tanh' | 'erf';
  /** Default LN_EPS (1e-5), as the GPT's WGSL. */
  lnEps?: number;
}

export class ReferenceGpt {
  readonly layout: ParamLayout;
  readonly #eps: number;
  readonly #gelu: [(u: number) => number, (u: number) => number];
  constructor(
    readonly config: GptConfig,
    variant: ReferenceVariant = {},
  ) {
    this.layout = gptParamLayout(config);
    this.#eps = variant.lnEps ?? LN_EPS;
    this.#gelu = variant.gelu === 'erf' ? [geluErf, geluErfGrad] : [gelu, geluGrad];
  }

  #blockShape(batch: ReferenceBatch, B: number): BlockShape {
    const c = this.config;
    const sees = (b: number, i: number, j: number) => ReferenceGpt.sees(batch.docIds, c.context, b, i, j);
    const [g, gGrad] = this.#gelu;
    return {
      depth: c.depth,
      B,
      T: c.context,
      D: c.width,
      H: c.heads,
      hidden: gptDims(c).hidden,
      eps: this.#eps,
      gelu: g,
      geluGrad: gGrad,
      sees,
    };
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
    const [D, T, V] = [c.width, c.context, c.vocabSize];
    const R = B * T;
    const P = (n: string) => this.view(params, n);
    const wte = P('wte');
    const wpe = P('wpe');
    const x: F64 = new Float64Array(R * D);
    for (let r = 0; r < R; r++) {
      const token = at(batch.inputs, r);
      const position = at(batch.positions, r);
      for (let i = 0; i < D; i++) {
        const te = token >= 0 && token < V ? at(wte, token * D + i) : 0;
        const pe = position >= 0 && position < T ? at(wpe, position * D + i) : 0;
        x[r * D + i] = te + pe;
      }
    }
    const { out, blocks } = blocksForward(P, x, this.#blockShape(batch, B));
    const { y, ...lnf } = layerNorm(out, P('lnf.g'), P('lnf.b'), R, D, this.#eps);
    const logits = matmul(y, wte, R, D, V, false, true);
    const { loss, correct, count, dlogits } = labelledCrossEntropy(logits, batch.labels, R, V);
    return { loss, correct, count, logits, cache: { batch, blocks, last: out, y, lnf, dlogits } };
  }

  /** Gradients of the mean loss with respect to every parameter, in the flat layout. */
  backward(params: F64, fwd: GptForward, B: number): F64 {
    const c = this.config;
    const [D, T, V] = [c.width, c.context, c.vocabSize];
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
    blocksBackward(P, G, cache.blocks, dx, this.#blockShape(batch, B));
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
  return crossEntropy(logits, labels, rows, V, 'labelled');
}
