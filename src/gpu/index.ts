export { acquireGpu, readBuffer, type AcquireOptions, type GpuContext } from './device.ts';
export {
  IMAGENET_MEAN, IMAGENET_STD, NormalizeKernel, align4, normalizeReference, type BatchShape, type NormalizeOptions,
} from './normalize.ts';
export { BatchUploader, type GpuBatch, type HostBatch, type UploaderOptions, type UploadMethod } from './uploader.ts';
