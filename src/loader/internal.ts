// What loader() shares with the folders above it (the video and text loaders) and its tests, not
// with users: turning a source into labelled items, and their seeded, rank-sharded order per epoch.
// This file is not in package.json's exports.
export { resolveSource, type LabelledSource, type LoaderSource, type ResolvedSource } from './sources.ts';
export type { RangedSource } from './labelled-source.ts';
export { listOrder, listStartOf, startOf, streamOrder, type LoaderState, type PassItem, type PassOrder } from './state.ts';
export { gpuTarget, isJax, isTfjs, type JaxNamespace, type TfNamespaceLike } from './options.ts';
export { openTfjsClipTarget, tfjsInt32, type ClipTensorBatch } from './tfjs-target.ts';
export { checkCommonOptions, COMMON_OPTIONS, type CommonLoaderOptions, type CommonLoaderSettings } from './common-options.ts';
export { checkShardResume, PARQUET_LAYOUT, parquetStreamOptions, shardStreamOrder } from './shards.ts';
export { LoaderShell, type Releasable } from './shell.ts';
export type { ParquetShards } from './parquet.ts';
export { isHubSource, isParquetSource, type HubSource, type ParquetSource } from './parquet-source.ts';
/** The Parquet reader, loaded only when a loader is given a Parquet or Hub source. */
export const loadParquetShards = async () => (await import('./parquet.ts')).openParquetShards;
/** The same reader, giving a Parquet source's rows as a list (the video loader's shape). */
export const loadParquetRows = async () => (await import('./parquet.ts')).openParquetRows;
export { CellPosition } from './cell-position.ts';
