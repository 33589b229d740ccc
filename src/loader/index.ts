// tandem's front door to loading: loader(source, options) gives batches from files to where they
// are wanted (CPU bytes, a GPU device, tf.js tensors) as one async-iterable, disposable object.
export { loader, Loader, LoaderError, type LoaderBatch, type LoaderErrorCode, type LoaderOutput } from './loader.ts';
export type { JaxNamespace, LoaderOptions, LoaderTarget, LoaderTransform, TfNamespaceLike } from './options.ts';
export type { LoaderSource, LabelledSource, ShardSource, SourceItem } from './sources.ts';
export type { HubSource, ParquetColumns, ParquetSource } from './parquet-source.ts';
export { shardSamples } from './shards.ts';
export type { LoaderState } from './state.ts';
export type { DeviceBatch } from './gpu-ring.ts';
export type { TensorBatch } from './tfjs-target.ts';
export type { JaxImageBatch } from './jax-target.ts';
export type { ClipTensorBatch } from './tfjs-target.ts';
