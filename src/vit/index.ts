// The ViT room's door: the GPU trainer, its configuration and presets, and timm weights. The CPU
// reference it is checked against and the kernels one by one are Tandem's own (tests import them
// from their files).
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
export {
  readSafetensors,
  writeSafetensors,
  WeightsError,
  type NamedTensor,
  type Safetensors,
  type WeightsErrorCode,
} from './safetensors.ts';
export { loadTimmWeights, saveTimmWeights, type TimmLoadOptions, type TimmWeights } from './timm.ts';
