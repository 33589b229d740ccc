// Tandem's front door: what a loader is built from, hand-picked. Each room also has its own door
// with everything it offers (tandem/pipeline, tandem/decode, tandem/gpu, tandem/sources,
// tandem/train, tandem/vit); encoders, caches' internals and test helpers live only there.

// The pipeline engine: sources → stages with their own concurrency → batches.
export {
  PipelineBuilder,
  Pipeline,
  workerTask,
  customTask,
  FILTERED,
  isEpochEnd,
  formatStats,
  bottleneck,
  profilePipeline,
  PipelineBuildError,
  PipelineFailureBudgetError,
  PipelineStallError,
} from './pipeline/index.ts';
export type {
  PipeOptions,
  SourceOptions,
  BuildOptions,
  StageContext,
  StageFn,
  Aggregator,
  FailureBudget,
  FailureRecord,
  PipelineStats,
  StageStats,
  ProfileOptions,
  StageProfile,
} from './pipeline/index.ts';

// Decoding on wasm threads, straight into batch buffers.
export { DecodePool, PoolBuffer, ImageBatcher, DecodeError, audioClips, fileByteSource, memoryByteSource } from './decode/index.ts';
export type {
  DecodePoolOptions,
  DecodePoolStats,
  DecodeMode,
  DecodeErrorCode,
  DecodedImageInfo,
  DecodeTarget,
  ImageDecodeOptions,
  EncodedImage,
  ImageBatch,
  ImageBatcherOptions,
  AudioDecodeOptions,
  DecodedAudioInfo,
  VideoDecodeOptions,
  DecodedVideoInfo,
  FrameSelection,
  ByteSource,
} from './decode/index.ts';

// Batches onto the GPU and into tensors.
export { acquireGpu, readBuffer, BatchUploader, NormalizeKernel, AugmentKernel, IMAGENET_MEAN, IMAGENET_STD } from './gpu/index.ts';
export type { GpuContext, GpuBatch, UploaderOptions, UploadMethod, NormalizeOptions, AugmentOptions } from './gpu/index.ts';

// One failure model: every error is a TandemError with a `code`; every item a source or stage
// could not deliver is a Failed ({ key, stage, error }), told apart from items by isFailure.
export {
  BatchReleasedError,
  EnvironmentError,
  FileError,
  InternalError,
  OptionError,
  TandemError,
  ThrownValueError,
  WorkerError,
  isFailure,
  type EnvironmentErrorCode,
  type FileErrorCode,
  type FileOperation,
  type WorkerErrorCode,
} from './errors/index.ts';
export type { Failed } from './errors/index.ts';

// Where the bytes come from.
export {
  listImageFolder,
  ensureSyntheticFolder,
  loadFiles,
  loadUrls,
  urlStage,
  fetchBytes,
  FetchError,
  httpByteSource,
  ShardStream,
  webDatasetSamples,
  DistributedSampler,
  mixSources,
  DirectoryCache,
  CacheStorageCache,
  SourceError,
  DatasetError,
} from './sources/index.ts';
export type {
  LabelledFile,
  Loaded,
  LoadFailure,
  LoadResult,
  UrlLoadOptions,
  FileLoadOptions,
  FetchOptions,
  ShardStreamOptions,
  ShardItem,
  WebDatasetSample,
  SamplerOptions,
  MixOptions,
  ByteCache,
} from './sources/index.ts';

// The one object to start with: files → decoded, transformed batches → CPU, GPU or tf.js.
export { loader, Loader, LoaderError, type LoaderErrorCode } from './loader/index.ts';
export type {
  DeviceBatch,
  HubSource,
  JaxImageBatch,
  JaxNamespace,
  LoaderBatch,
  LoaderOptions,
  LoaderOutput,
  LoaderSource,
  LoaderState,
  LoaderTarget,
  LoaderTransform,
  ParquetColumns,
  ParquetSource,
  ShardSource,
  SourceItem,
  TensorBatch,
  TfNamespaceLike,
} from './loader/index.ts';

// Datasets where they live: Parquet files and Hugging Face Hub datasets, read by row group.
export { ParquetError, HubError, type ParquetErrorCode, type HubErrorCode } from './parquet/index.ts';
