export {
  acquireGpu,
  assertSameDevice,
  GpuError,
  gpuInstanceOf,
  onCpuAdapter,
  readBuffer,
  type AcquireOptions,
  type GpuContext,
  type GpuErrorCode,
} from './device.ts';
export {
  IMAGENET_MEAN,
  IMAGENET_STD,
  NormalizeKernel,
  normalizeReference,
  type BatchShape,
  type NormalizeOptions,
  type TensorLayout,
} from './normalize.ts';
export { BatchUploader, type GpuBatch, type HostBatch, type UploaderOptions, type UploadMethod } from './uploader.ts';
export { UniformStruct, uniformBuffer, type UniformType, type UniformValues } from './uniforms.ts';
export { AugmentKernel, augmentReference, sampleAugmentations, type AugmentOptions, type AugmentShape } from './augment.ts';
export {
  checkFeedShape,
  FeedError,
  feedDims,
  liveBytes,
  GpuNormalizer,
  normalizeOnCpu,
  resolveFeed,
  type FeedErrorCode,
  type FeedOptions,
  type FeedShape,
} from './feed.ts';
