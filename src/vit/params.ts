// The uniform structs of the ViT's WGSL kernels, field for field as the .wgsl files declare them
// (test/unit/uniforms.test.ts compares the two).
import { UniformStruct } from '../gpu/internal.ts';
import type { TrainConfig } from './config.ts';

/** matmul-common.wgsl: C = alpha·op(A)·op(B) (+ bias, + residual, + C), batched by strides. */
export const MatmulParams = new UniformStruct('Params', [
  ['M', 'u32'],
  ['N', 'u32'],
  ['K', 'u32'],
  ['inner', 'u32'],
  ['lda', 'u32'],
  ['ldb', 'u32'],
  ['ldc', 'u32'],
  ['flags', 'u32'],
  ['offA', 'u32'],
  ['offB', 'u32'],
  ['offC', 'u32'],
  ['alpha', 'f32'],
  ['sA1', 'u32'],
  ['sA2', 'u32'],
  ['sB1', 'u32'],
  ['sB2', 'u32'],
  ['sC1', 'u32'],
  ['sC2', 'u32'],
  ['biasOff', 'u32'],
  ['pad1', 'u32'],
] as const);

/** embed.wgsl: patchify and the token embedding (class token, positions). */
export const EmbedParams = new UniformStruct('Params', [
  ['B', 'u32'],
  ['C', 'u32'],
  ['S', 'u32'],
  ['P', 'u32'],
  ['grid', 'u32'],
  ['T', 'u32'],
  ['D', 'u32'],
  ['total', 'u32'],
  ['clsOff', 'u32'],
  ['posOff', 'u32'],
  ['stride', 'u32'],
  ['pad', 'u32'],
] as const);

/** token-embed.wgsl: the GPT's token + position embedding and its backward. */
export const TokenEmbedParams = new UniformStruct('Params', [
  ['rows', 'u32'],
  ['D', 'u32'],
  ['V', 'u32'],
  ['context', 'u32'],
  ['wteOff', 'u32'],
  ['wpeOff', 'u32'],
  ['stride', 'u32'],
  ['total', 'u32'],
] as const);

/** layernorm.wgsl. */
export const LayerNormParams = new UniformStruct('Params', [
  ['rows', 'u32'],
  ['D', 'u32'],
  ['xStride', 'u32'],
  ['yStride', 'u32'],
  ['gOff', 'u32'],
  ['bOff', 'u32'],
  ['accumulate', 'u32'],
  ['eps', 'f32'],
] as const);

/** attention.wgsl (full, or causal within documents). */
export const AttentionParams = new UniformStruct('Params', [
  ['B', 'u32'],
  ['H', 'u32'],
  ['T', 'u32'],
  ['hd', 'u32'],
  ['D', 'u32'],
  ['scale', 'f32'],
  ['pad0', 'u32'],
  ['pad1', 'u32'],
] as const);

/** elementwise.wgsl: GELU, column sums, softmax. */
export const ElementwiseParams = new UniformStruct('Params', [
  ['n', 'u32'],
  ['cols', 'u32'],
  ['off', 'u32'],
  ['stride', 'u32'],
] as const);

/** loss.wgsl: cross-entropy over B rows of K logits (mean over the rows, or over the labelled ones). */
export const LossParams = new UniformStruct('Params', [
  ['B', 'u32'],
  ['K', 'u32'],
  ['pad0', 'u32'],
  ['pad1', 'u32'],
] as const);

/** optim.wgsl: gradient norm, learning-rate schedule and AdamW. */
export const OptimHyper = new UniformStruct('Hyper', [
  ['n', 'u32'],
  ['decayEnd', 'u32'],
  ['warmup', 'f32'],
  ['total', 'f32'],
  ['lr', 'f32'],
  ['minLr', 'f32'],
  ['beta1', 'f32'],
  ['beta2', 'f32'],
  ['eps', 'f32'],
  ['weightDecay', 'f32'],
  ['clipNorm', 'f32'],
  ['stride', 'u32'],
] as const);

/** The optimizer's values, without the dispatch stride the kernels add. */
export type OptimValues = Record<Exclude<(typeof OptimHyper.fields)[number][0], 'stride'>, number>;

/** The optimizer's values for `n` parameters (the first `decayEnd` decayed) and a schedule. */
export function optimValues(n: number, decayEnd: number, t: TrainConfig): OptimValues {
  return {
    n,
    decayEnd,
    warmup: t.warmupSteps,
    total: t.totalSteps,
    lr: t.lr,
    minLr: t.minLr,
    beta1: t.beta1,
    beta2: t.beta2,
    eps: t.eps,
    weightDecay: t.weightDecay,
    clipNorm: t.clipNorm,
  };
}
