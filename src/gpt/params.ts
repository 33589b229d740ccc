// The uniform structs of the GPT's own WGSL kernels, field for field as the .wgsl files declare
// them (test/unit/uniforms.test.ts compares the two).
import { UniformStruct } from '../gpu/internal.ts';

/** embed.wgsl: token + position embedding and its backward. */
export const GptEmbedParams = new UniformStruct('Params', [
  ['rows', 'u32'],
  ['D', 'u32'],
  ['V', 'u32'],
  ['context', 'u32'],
  ['wteOff', 'u32'],
  ['wpeOff', 'u32'],
  ['stride', 'u32'],
  ['total', 'u32'],
] as const);

/** attention.wgsl: causal attention within documents. */
export const GptAttentionParams = new UniformStruct('Params', [
  ['B', 'u32'],
  ['H', 'u32'],
  ['T', 'u32'],
  ['hd', 'u32'],
  ['D', 'u32'],
  ['scale', 'f32'],
  ['pad0', 'u32'],
  ['pad1', 'u32'],
] as const);

/** loss.wgsl: cross-entropy over the labelled positions. */
export const GptLossParams = new UniformStruct('Params', [
  ['rows', 'u32'],
  ['V', 'u32'],
  ['pad0', 'u32'],
  ['pad1', 'u32'],
] as const);
