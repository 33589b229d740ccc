// The ViT room's door: the GPU trainer, its configuration and presets, timm weights, and the CPU
// reference used to check it (the kernels one by one are in internal.ts, for tests).
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
