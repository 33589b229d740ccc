export { acquireGpu, readBuffer, type AcquireOptions, type GpuContext } from './device.ts';
export {
  IMAGENET_MEAN, IMAGENET_STD, NormalizeKernel, align4, normalizeReference, type BatchShape, type NormalizeOptions,
} from './normalize.ts';
