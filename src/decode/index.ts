export { DecodePool, type DecodedImageInfo, type DecodePoolOptions, type DecodePoolStats, type ImageDecodeOptions } from './pool.ts';
export { DecodeError, type DecodeErrorCode } from './errors.ts';
export { ImageBatcher, type EncodedImage, type ImageBatch, type ImageBatcherOptions, type SlotToken } from './batches.ts';
