// The ViT room's door: the GPU trainer, its configuration and presets, the kernels, and the CPU
// reference used to check them.
export {
  defaultTrain,
  dims,
  initParams,
  layerNormEps,
  learningRate,
  paramLayout,
  presets,
  type Dims,
  type ParamLayout,
  type TensorSpec,
  type TrainConfig,
  type ViTConfig,
} from './config.ts';
export { ViTTrainer, type Batch, type LossReport, type TrainerOptions } from './model.ts';
export { Kernels, record, recordOne, type AttentionShape, type Dispatch, type LayerNormSpec, type MatmulSpec } from './kernels.ts';
export { ReferenceViT, adamwStep, clipScale, patchify, type AdamState, type ForwardResult } from './reference.ts';
export {
  readSafetensors,
  writeSafetensors,
  WeightsError,
  type NamedTensor,
  type Safetensors,
  type WeightsErrorCode,
} from './safetensors.ts';
export { loadTimmWeights, saveTimmWeights, type TimmLoadOptions, type TimmWeights } from './timm.ts';
