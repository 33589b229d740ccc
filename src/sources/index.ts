export { ensureSyntheticFolder, listImageFolder, type LabelledFile, type SyntheticFolderOptions } from './folder.ts';
export { holdOut, shuffledEpoch, shuffledEpochs } from './sampling.ts';
export * from './synthetic/index.ts';
export { readTar, SourceError, unsafeNameReason, type SourceErrorReason, type TarMember, type TarReadOptions } from './tar.ts';
export { isSampleFailure, splitKey, webDatasetSamples, type WebDatasetFailure, type WebDatasetItem, type WebDatasetOptions, type WebDatasetSample } from './shards.ts';
export { fetchBytes, FetchError, fetchStream, type FetchOptions } from './urls.ts';
