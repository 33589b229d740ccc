// tandem/onnx: Tandem's batches as ONNX Runtime Web tensors. onnxruntime-web is an optional peer
// dependency: this door only names its types and takes `ort` from the caller.
export { OnnxFeeder, type OnnxBatch, type OnnxFeedOptions, type Ort } from './feeder.ts';
export { FeedError, GpuError, type FeedErrorCode, type GpuErrorCode } from '../gpu/index.ts';
