// tandem/parquet, the Parquet room: datasets of Parquet files read by row group, only the columns asked for, and
// Hugging Face Hub datasets resolved to their Parquet files' URLs. Local paths (Node, Deno), URLs
// (HTTP Range requests) and browser Files alike; every failure names its file and row group.
export { ParquetError, type ParquetErrorCode } from './errors.ts';
export {
  openParquetDataset,
  type ColumnKind,
  type ParquetDataset,
  type ParquetDatasetOptions,
  type ParquetInput,
  type RowGroupData,
  type RowGroupRef,
} from './dataset.ts';
export {
  hfPathToUrl,
  HubError,
  resolveHubDataset,
  type HubDataset,
  type HubDatasetSpec,
  type HubErrorCode,
  type HubOptions,
} from './hub.ts';
export { classLabelNames, hubFeatures, type HubFeature } from './features.ts';
export { writeParquet, type ParquetCompression, type ParquetRow, type WriteParquetOptions, type WrittenParquet } from './write.ts';
