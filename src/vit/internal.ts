// What the ViT room shares with its tests and benchmarks, not with users (not in package.json's
// exports): the kernels one by one, how a dispatch is recorded, the optimizer's uniform values and
// the CPU reference's building blocks (the GPT in src/gpt reuses all of them).
export { Kernels, record, recordOne, type AttentionShape, type Dispatch, type LayerNormSpec, type MatmulSpec } from './kernels.ts';
export { optimValues, type OptimValues } from './params.ts';
export {
  addBias,
  colSum,
  gelu,
  geluGrad,
  layerNorm,
  layerNormBackward,
  matmul,
  softmaxBackward,
  type F64,
  type LnCache,
} from './reference-ops.ts';
