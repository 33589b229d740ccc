export { ensureSyntheticFolder, listImageFolder, type LabelledFile, type SyntheticFolderOptions } from './folder.ts';
export { holdOut, shuffledEpoch, shuffledEpochs } from './sampling.ts';
export { readTar, SourceError, unsafeNameReason, type SourceErrorReason, type TarMember, type TarReadOptions } from './tar.ts';
export { DatasetError, type DatasetErrorCode } from './errors.ts';
export {
  splitKey,
  webDatasetSamples,
  type WebDatasetFailure,
  type WebDatasetItem,
  type WebDatasetOptions,
  type WebDatasetSample,
} from './shards.ts';
export {
  DEFAULT_MAX_FETCH_BYTES,
  fetchBytes,
  FetchError,
  fetchStream,
  httpByteSource,
  rangedUrlSource,
  type FetchErrorCode,
  type FetchOptions,
} from './urls.ts';
// Sources yield items and failures in one stream; isFailure tells them apart.
export { isFailure, type Failed } from '../errors/index.ts';
export {
  distributedEnv,
  partitionList,
  resolvePartition,
  type Partition,
  type PartitionOptions,
  type UnevenMode,
} from './partition.ts';
export { DistributedSampler, type SamplerOptions, type SamplerState } from './sampler.ts';
export {
  defaultOpener,
  readShard,
  ShardError,
  type ShardFormat,
  type ShardFormatOptions,
  type ShardOpener,
  type ShardSampleReader,
  type ShardReadOptions,
  type ShardStage,
} from './shard-reader.ts';
export {
  documentTokens,
  LLMC_GPT2_MAGIC,
  LLMC_LLAMA3_MAGIC,
  parseTokenShardHeader,
  tokenShardSamples,
  type TokenShardHeader,
  type TokenShardOptions,
  type TokenShardReadOptions,
} from './token-shards.ts';
export {
  encodeTokenShard,
  writeTokenShards,
  type TokenShardEncodeOptions,
  type TokenShardInfo,
  type TokenShardManifest,
  type TokenShardWriteOptions,
} from './token-shard-writer.ts';
export {
  ShardStream,
  type ShardFailure,
  type ShardItem,
  type ShardSample,
  type ShardStreamOptions,
  type ShardStreamState,
} from './shard-stream.ts';
export { regroupShardStates, type PlannedEpoch, type RegroupOptions, type ShardPiece } from './shard-plan.ts';
export { mixSources, WeightedMix, type Mixed, type MixInput, type MixOptions, type MixPosition, type MixState } from './mix.ts';
export {
  DEFAULT_MAX_ITEM_BYTES,
  loadFiles,
  loadUrl,
  loadUrls,
  urlStage,
  type FileLoadOptions,
  type Loaded,
  type LoadFailure,
  type LoadOptions,
  type LoadResult,
  type LoadStage,
  type UrlLoadOptions,
} from './load.ts';
export { DirectoryCache, type ByteCache, type CacheEntryWriter, type CacheStats } from './cache.ts';
export { CacheStorageCache } from './browser-cache.ts';
export { TarWriter, type ChunkSink } from './tar-writer.ts';
export { writeFolderShards, writeShards, type ShardInfo, type ShardManifest, type ShardWriteOptions } from './write-shards.ts';
export {
  labelByFolder,
  listDroppedItems,
  listFileList,
  listPickedDirectory,
  readPicked,
  type DataTransferItemLike,
  type DirectoryEntryLike,
  type DirectoryHandleLike,
  type FileEntryLike,
  type FileHandleLike,
  type PickedFile,
  type PickedFolder,
} from './picked.ts';
