// What the ViT room shares with its tests and benchmarks, not with users (not in package.json's
// exports): the kernels one by one and how a dispatch is recorded.
export { Kernels, record, recordOne, type AttentionShape, type Dispatch, type LayerNormSpec, type MatmulSpec } from './kernels.ts';
