// The GPT's shape, its presets and the flat layout of its parameters, shared by the CPU reference
// and the GPU trainer so both index every tensor the same way. The blocks' tensors have the ViT's
// names and order, so the ViT's kernels run on them unchanged.
import { OptionChecker } from '../errors/index.ts';
import { CORPUS_VOCAB_SIZE } from '../synthetic/index.ts';
import type { ParamLayout, TensorSpec } from '../vit/index.ts';
import { addBlockTensors, initTensors, layoutTensors } from '../vit/internal.ts';

export interface GptConfig {
  /** Token ids are 0 … vocabSize − 1. */
  vocabSize: number;
  /** Positions per row: the learned position table's length and the trainer's sequence length. */
  context: number;
  width: number;
  depth: number;
  heads: number;
  mlpRatio: number;
}

export const gptPresets = {
  /** Character-level over the generated corpus (src/synthetic/text.ts); trains on lavapipe in ~30 s. */
  tiny: { vocabSize: CORPUS_VOCAB_SIZE, context: 64, width: 64, depth: 2, heads: 4, mlpRatio: 2 },
  /** A GPT-2-small-like shape for a real GPU and a real tokenizer. */
  small: { vocabSize: 50257, context: 256, width: 384, depth: 6, heads: 6, mlpRatio: 4 },
} as const satisfies Record<string, GptConfig>;

export interface GptDims {
  headDim: number;
  /** MLP hidden width. */
  hidden: number;
}

/** Checks a config (OptionError naming the field) and derives its dimensions. */
export function gptDims(c: GptConfig, where = 'GptConfig'): GptDims {
  const o = new OptionChecker(where, c, ['vocabSize', 'context', 'width', 'depth', 'heads', 'mlpRatio']);
  o.integer('vocabSize', 0, 2, 1 << 24);
  o.integer('context', 0, 1, 8192);
  o.integer('width', 0, 1, 8192);
  o.integer('depth', 0, 1, 256);
  o.integer('heads', 0, 1, c.width);
  o.number('mlpRatio', 0, 1 / c.width, 64);
  if (c.width % c.heads !== 0) o.fail('heads', `a divisor of width ${c.width}`);
  return { headDim: c.width / c.heads, hidden: Math.max(1, Math.round(c.width * c.mlpRatio)) };
}

export function gptParamLayout(c: GptConfig): ParamLayout {
  const d = gptDims(c);
  const D = c.width;
  return layoutTensors((add) => {
    add('wte', [c.vocabSize, D], 'normal', true);
    add('wpe', [c.context, D], 'normal');
    addBlockTensors(add, c.depth, D, d.hidden);
    add('lnf.g', [D], 'ones');
    add('lnf.b', [D], 'zeros');
  });
}

/** N(0, 0.1²) for the tied embedding: its rows are also the output head, whose logits must start small. */
const EMBEDDING_STD = 0.1;
const POSITION_STD = 0.02;

/**
 * Seeded initial parameters: matrices N(0, 1/fan-in) (the ViT's default), the token table
 * N(0, 0.1²), positions N(0, 0.02²), truncated at two standard deviations; `std` draws every
 * normal tensor from N(0, std²) instead.
 */
export function initGptParams(c: GptConfig, seed = 1, std?: number): Float32Array<ArrayBuffer> {
  const scale = (t: TensorSpec) =>
    std ?? (t.name === 'wte' ? EMBEDDING_STD : t.name === 'wpe' ? POSITION_STD : 1 / Math.sqrt(t.shape[0] ?? 1));
  return initTensors(gptParamLayout(c), seed, scale);
}
