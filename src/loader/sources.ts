// What `loader()` accepts as its source, turned into one shape: a list of labelled items that read
// their bytes when asked (folders, file and URL lists, browser files), which the loader can shuffle,
// shard by rank and resume; or a stream (any iterable of bytes), read in its own order.
import { OptionError } from '../errors/index.ts';
import { memoryByteSource } from '../decode/index.ts';
import { openFileRange, readFile } from '../runtime/index.ts';
import type { ParquetShards } from './parquet.ts';
import { isHubSource, isParquetSource, type HubSource, type ParquetSource } from './parquet-source.ts';
import {
  fetchBytes,
  listDroppedItems,
  listFileList,
  listImageFolder,
  listPickedDirectory,
  rangedUrlSource,
  type DataTransferItemLike,
  type DirectoryHandleLike,
  type FetchOptions,
} from '../sources/index.ts';

import type { LabelledSource } from './labelled-source.ts';
export type { LabelledSource } from './labelled-source.ts';

/** An item given by the caller: where its bytes are (one of path, url, file, bytes, read) and its label. */
export interface SourceItem {
  path?: string;
  url?: string | URL;
  file?: Blob;
  bytes?: Uint8Array;
  /** Reads the bytes when the loader asks (a LabelledSource is a SourceItem). */
  read?: () => Promise<Uint8Array>;
  /** Class index (default -1: unlabelled). */
  label?: number;
  key?: string;
}

/** WebDataset shards as a loader source. */
export interface ShardSource {
  /** Shard paths (Node, Deno) or URLs, in a fixed order: every rank must give the same list. */
  shards: readonly string[];
  /** Samples held for the seeded shuffle when `shuffle` is on (default 256). */
  shuffleBuffer?: number;
}

export function isShardSource(x: unknown): x is ShardSource {
  return typeof x === 'object' && x !== null && Array.isArray((x as { shards?: unknown }).shards);
}

/**
 * Where the images come from (videos and text documents take the same forms):
 * - a folder path (Node, Deno): ImageNet layout, `root/<class>/<image>`, classes sorted → labels;
 * - a list of paths, URLs or `{ path | url | file | bytes, label }` items;
 * - in browsers, a `FileList` or `File[]` from `<input webkitdirectory>` (labelled by folder), a
 *   `FileSystemDirectoryHandle` (`showDirectoryPicker()`), or a drop's `DataTransferItemList`;
 * - any iterable or async iterable of `{ bytes, label?, key? }`, read in its own order;
 * - `{ shards: [...] }`: WebDataset tar shards (paths or URLs), streamed, shuffled and sharded;
 * - `{ parquet: [...] }` or `{ hf: 'owner/name', split }`: Parquet files or a Hub dataset, streamed
 *   by row group, shuffled and sharded as shards are.
 */
export type LoaderSource =
  | string
  | ShardSource
  | ParquetSource
  | HubSource
  | readonly (string | URL | SourceItem)[]
  | ArrayLike<File>
  | DirectoryHandleLike
  | ArrayLike<DataTransferItemLike>
  | Iterable<SourceItem>
  | AsyncIterable<SourceItem>;

export interface ResolvedSource {
  /** Random-access items (shuffled, sharded, resumable), or undefined for a stream. */
  list: readonly LabelledSource[] | undefined;
  stream: AsyncIterable<LabelledSource> | Iterable<LabelledSource> | undefined;
  /** WebDataset shards or Parquet row groups, streamed with their own order and state. */
  shards?: ShardSource | ParquetShards;
  /** Class names by label, where the source names them (folders). */
  classes: readonly string[];
}

const WHERE = 'loader';

/** `accept`: the file names a folder source keeps (default: images). */
export async function resolveSource(source: LoaderSource, fetchOptions: FetchOptions, accept?: RegExp): Promise<ResolvedSource> {
  if (typeof source === 'string') {
    const { files, classes } = await listImageFolder(source, accept);
    return { list: files.map((f) => pathItem(f.path, f.label, f.path)), stream: undefined, classes };
  }
  if (isShardSource(source)) return { list: undefined, stream: undefined, shards: source, classes: [] };
  if (isParquetSource(source) || isHubSource(source)) {
    if (accept !== undefined)
      throw new OptionError(
        WHERE,
        'source',
        source,
        'a folder or a list of files, URLs or items (Parquet sources are read by loader(), videoLoader() and textLoader())',
      );
    // The Parquet reader is loaded only for a Parquet source.
    const { openParquetShards } = await import('./parquet.ts');
    const parquet = await openParquetShards(source, 'image', fetchOptions, WHERE);
    return { list: undefined, stream: undefined, shards: parquet, classes: parquet.classes };
  }
  if (isDirectoryHandle(source)) return picked(await listPickedDirectory(source, accept));
  if (isArrayLike(source)) {
    const first = source.length > 0 ? source[0] : undefined;
    if (isDroppedItem(first)) return picked(await listDroppedItems(source as ArrayLike<DataTransferItemLike>, accept));
    if (isFile(first) && !Array.isArray(source)) return picked(listFileList(source as ArrayLike<File>, accept));
    if (isFile(first) && (first as File).webkitRelativePath) return picked(listFileList(source as ArrayLike<File>, accept));
    const list = Array.from(source as ArrayLike<string | URL | SourceItem | File>, (item, i) => listItem(item, i, fetchOptions));
    return { list, stream: undefined, classes: [] };
  }
  if (typeof source === 'object' && source !== null && (Symbol.asyncIterator in source || Symbol.iterator in source))
    return { list: undefined, stream: streamItems(source as Iterable<SourceItem> | AsyncIterable<SourceItem>, fetchOptions), classes: [] };
  throw new OptionError(
    WHERE,
    'source',
    source,
    'a folder path, a list of files or URLs, browser files, or an iterable of { bytes, label }',
  );
}

function picked(folder: { files: { path: string; label: number; file: Blob }[]; classes: string[] }): ResolvedSource {
  return { list: folder.files.map((f) => blobItem(f.file, f.label, f.path)), stream: undefined, classes: folder.classes };
}

function pathItem(path: string, label: number, key: string): LabelledSource {
  return { key, label, read: () => readFile(path), open: () => openFileRange(path) };
}

function blobItem(file: Blob, label: number, key: string): LabelledSource {
  return {
    key,
    label,
    read: async () => new Uint8Array(await file.arrayBuffer()),
    open: async () => ({
      size: file.size,
      read: async (offset, length) => new Uint8Array(await file.slice(offset, offset + length).arrayBuffer()),
      close: async () => {},
    }),
  };
}

function urlItem(url: string, label: number, key: string, options: FetchOptions): LabelledSource {
  return { key, label, read: () => fetchBytes(url, options), open: () => rangedUrlSource(url, options) };
}

function bytesItem(bytes: Uint8Array, label: number, key: string): LabelledSource {
  return {
    key,
    label,
    read: () => Promise.resolve(bytes),
    open: async () => ({ ...memoryByteSource(bytes), size: bytes.length, close: async () => {} }),
  };
}

function listItem(item: string | URL | SourceItem | File, index: number, options: FetchOptions): LabelledSource {
  if (typeof item === 'string') return /^(https?|blob|data):/.test(item) ? urlItem(item, -1, item, options) : pathItem(item, -1, item);
  if (item instanceof URL) return urlItem(item.href, -1, item.href, options);
  if (isFile(item)) return blobItem(item, -1, item.name || `file/${index}`);
  return fromSourceItem(item, index, options, `source[${index}]`);
}

function fromSourceItem(item: SourceItem, index: number, options: FetchOptions, field: string): LabelledSource {
  if (typeof item !== 'object' || item === null)
    throw new OptionError(WHERE, field, item, 'a path, a URL or { path | url | file | bytes | read, label }');
  const label = item.label ?? -1;
  if (!Number.isInteger(label) || label < -1) throw new OptionError(WHERE, `${field}.label`, item.label, 'an integer ≥ -1');
  const { path, url, file, bytes } = item;
  if (bytes !== undefined) {
    if (!(bytes instanceof Uint8Array)) throw new OptionError(WHERE, `${field}.bytes`, bytes, 'a Uint8Array');
    return bytesItem(bytes, label, item.key ?? `item/${index}`);
  }
  if (typeof path === 'string') return pathItem(path, label, item.key ?? path);
  if (url !== undefined) return urlItem(String(url), label, item.key ?? String(url), options);
  if (file !== undefined && isFile(file)) return blobItem(file, label, item.key ?? ((file as File).name || `file/${index}`));
  if (typeof item.read === 'function') return { key: item.key ?? `item/${index}`, label, read: item.read };
  throw new OptionError(WHERE, field, item, 'an item with one of path, url, file, bytes or read');
}

async function* streamItems(
  items: Iterable<SourceItem> | AsyncIterable<SourceItem>,
  options: FetchOptions,
): AsyncGenerator<LabelledSource> {
  let index = 0;
  for await (const item of items) {
    yield fromSourceItem(item, index, options, `source item ${index}`);
    index++;
  }
}

function isArrayLike(x: unknown): x is ArrayLike<unknown> {
  return typeof x === 'object' && x !== null && typeof (x as { length?: unknown }).length === 'number' && !(Symbol.asyncIterator in x);
}

function isFile(x: unknown): x is Blob {
  return typeof Blob !== 'undefined' && x instanceof Blob;
}

function isDirectoryHandle(x: unknown): x is DirectoryHandleLike {
  return (
    typeof x === 'object' &&
    x !== null &&
    (x as { kind?: unknown }).kind === 'directory' &&
    typeof (x as { values?: unknown }).values === 'function'
  );
}

function isDroppedItem(x: unknown): x is DataTransferItemLike {
  return typeof x === 'object' && x !== null && typeof (x as { webkitGetAsEntry?: unknown }).webkitGetAsEntry === 'function';
}
