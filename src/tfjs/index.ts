// tandem/tfjs: Tandem's batches as TensorFlow.js tensors. TensorFlow.js is an optional peer
// dependency: this door only names its types and takes its namespace (and WebGPUBackend) from the
// caller, so the core never loads it.
export { useDeviceForTfjs, tfjsDevice, type Tf, type WebGpuBackendClass } from './backend.ts';
export { TfjsFeeder, type TfjsBatch, type TfjsFeedOptions } from './feeder.ts';
export { FeedError, GpuError, type FeedErrorCode, type GpuErrorCode } from '../gpu/index.ts';
