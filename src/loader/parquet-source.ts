// What a Parquet or Hub source looks like, and how to tell one: light enough for every loader to
// import (the reader itself, src/loader/parquet.ts over tandem/parquet, is imported only when a
// loader is given such a source).
import type { ParquetInput } from '../parquet/index.ts';

/** Columns to read; each defaults to what the file's Hub features (or its column types) say. */
export interface ParquetColumns {
  /** The image column: the Hub's Image struct `{ bytes, path }` or a binary column. */
  image?: string;
  /** The video column for videoLoader(): the Hub's Video struct `{ bytes, path }` or a binary column. */
  video?: string;
  /** The label column: integers (a ClassLabel, its names from the file's metadata) or strings (ids in sorted order). */
  label?: string;
  /** The text column (a string column) for textLoader(). */
  text?: string;
  /** Rows held for the seeded shuffle when `shuffle` is on (default 256). */
  shuffleBuffer?: number;
}

/** Parquet files: local paths (Node, Deno), URLs (read by HTTP Range) or browser Files. */
export interface ParquetSource extends ParquetColumns {
  parquet: readonly ParquetInput[];
}

/** A dataset on the Hugging Face Hub, named as in Python's `load_dataset`, read from its Parquet conversion. */
export interface HubSource extends ParquetColumns {
  /** 'owner/name', or a path 'hf://datasets/owner/name@revision/path/file.parquet'. */
  hf: string;
  /** Default 'default'. */
  config?: string;
  split?: string;
  /** A revision of the repository whose own .parquet files are read (default: the Parquet conversion). */
  revision?: string;
  /** A token for gated or private datasets (default $HF_TOKEN); sent as `Authorization: Bearer`. */
  token?: string;
  /** The Hub's address (default $HF_ENDPOINT, else the Hub): a mirror, or a local server in tests. */
  endpoint?: string;
}

export function isParquetSource(x: unknown): x is ParquetSource {
  return typeof x === 'object' && x !== null && Array.isArray((x as { parquet?: unknown }).parquet);
}

export function isHubSource(x: unknown): x is HubSource {
  return typeof x === 'object' && x !== null && typeof (x as { hf?: unknown }).hf === 'string';
}

/** The member a row's image bytes take in its sample (the label is `cls`, as in tar shards). */
export const ROW_DATA = 'data';
