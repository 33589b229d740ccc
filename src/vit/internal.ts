// What the ViT room shares with its tests and benchmarks, not with users (not in package.json's
// exports): the kernels one by one, how a dispatch is recorded, the optimizer's uniform values and
// the CPU reference's building blocks, the transformer blocks' dispatches (the GPT in src/gpt
// reuses all of them: its kernels are the decoder's of Kernels).
export {
  Kernels,
  record,
  recordOne,
  type AttentionShape,
  type Dispatch,
  type EmbedTables,
  type LayerNormSpec,
  type MatmulSpec,
} from './kernels.ts';
export { blockStack, checkBindingLimit, graphStorage, layerNormOf, type BlockDims } from './blocks.ts';
export { decodeFramed, encodeFramed, loadTrainer, saveTrainer } from './checkpoint.ts';
export { addBlockTensors, initTensors, layoutTensors, type AddTensor } from './config.ts';
export { optimValues, type OptimValues } from './params.ts';
export {
  addBias,
  colSum,
  crossEntropy,
  gelu,
  geluErf,
  geluErfGrad,
  geluGrad,
  layerNorm,
  layerNormBackward,
  LN_EPS,
  matmul,
  softmaxBackward,
  type F64,
  type LnCache,
} from './reference-ops.ts';
export { at, blocksBackward, blocksForward, type BlockCache, type BlockShape } from './reference-blocks.ts';
