// The GPU room's door: the device (Tandem's own, or a framework's adopted), the upload ring, and the
// WGSL preprocessing kernels. What other rooms share with it without users seeing it is in internal.ts.
export { acquireGpu, GpuError, readBuffer, type AcquireOptions, type GpuContext, type GpuErrorCode } from './device.ts';
export { IMAGENET_MEAN, IMAGENET_STD, NormalizeKernel, type BatchShape, type NormalizeOptions, type TensorLayout } from './normalize.ts';
export { BatchUploader, type GpuBatch, type HostBatch, type UploaderOptions, type UploadMethod } from './uploader.ts';
export { AugmentKernel, type AugmentOptions, type AugmentShape } from './augment.ts';
export { FeedError, type FeedErrorCode, type FeedOptions } from './feed.ts';
