// What textLoader() reads: token shards (already ids), WebDataset shards of text documents, text
// files (a folder, lists of paths, URLs or browser files), documents in memory, or any iterable of
// them. Each becomes a PassOrder (the image loader's: seeded order per epoch, this rank's share,
// a state to resume from) over documents that read either their bytes or their ids.
import { OptionError } from '../errors/index.ts';
import {
  listOrder,
  shardStreamOrder,
  resolveSource,
  startOf,
  streamOrder,
  type LabelledSource,
  type LoaderSource,
  type LoaderState,
  type PassOrder,
} from '../loader/internal.ts';
import {
  isHubSource,
  isParquetSource,
  loadParquetShards,
  type HubSource,
  type ParquetShards,
  type ParquetSource,
} from '../loader/internal.ts';
import { listDir, openFileRange } from '../runtime/index.ts';
import {
  defaultOpener,
  isFailure,
  readShard,
  ShardStream,
  SourceError,
  type FetchOptions,
  type ShardStreamOptions,
  type ShardStreamState,
  type TokenShardOptions,
} from '../sources/index.ts';
import { TextError } from './errors.ts';
import { expandJsonl, jsonlExt, type ListedText, tooLarge } from './jsonl.ts';

/** Pre-tokenised shards (docs/sources.md, "Token shards"), paths or URLs. */
export interface TokenShardSource {
  tokens: readonly string[];
  /** Documents held for the seeded shuffle when `shuffle` is on (default 256). */
  shuffleBuffer?: number;
  /**
   * How an llm.c shard splits into documents (`documentStart`: the id each one starts with, such
   * as GPT-2's end-of-text 50256; without it a shard is one document) and the limits
   * (`vocabSize`, `maxDocuments`, `maxDocumentTokens`), as ShardStream's `tokenShards` takes them.
   */
  tokenShards?: TokenShardOptions;
}

/** WebDataset tar shards whose samples hold a `.txt`, `.md` or `.json` document. */
export interface TextShardSource {
  shards: readonly string[];
  shuffleBuffer?: number;
}

/** Documents in memory: strings, or `{ text, key }`. */
export interface InMemoryTexts {
  texts: readonly (string | { text: string; key?: string })[];
}

/** Parquet files or a Hub dataset: one document per row of the text column. */
export type TextSource = TokenShardSource | TextShardSource | InMemoryTexts | ParquetSource | HubSource | LoaderSource;

/** One document as the source gives it: ids (token shards) or bytes to tokenise. */
export type RawDocument = { key: string; tokens: Uint32Array } | { key: string; bytes: Uint8Array; ext: string };

export interface TextItem {
  readonly key: string;
  read(): Promise<RawDocument>;
}

export interface ResolvedText {
  order: PassOrder;
  /** Whether documents arrive as ids (no tokenizer needed). */
  tokens: boolean;
  /** The item a PassItem stands for (PassOrder's items carry only key/label/read). */
  items: (epoch: number, offset: number, epochs: number) => Iterable<TextItem> | AsyncIterable<TextItem>;
  /** A document named by its key, read again on its own (shard sources: a regroup's carried pieces). */
  carried: (key: string) => TextItem;
  /** Closes what the source holds open (a Parquet dataset's files). */
  close?: () => Promise<void>;
}

const notCarried = (key: string): TextItem => ({
  key,
  read: () =>
    Promise.reject(
      new OptionError('textLoader options', 'resumeFrom.carry', key, 'carried pieces only for shard sources (regroupTextStates)'),
    ),
});

const TEXT_FILES = /\.(txt|md|json|jsonl|text)$/i;
const TEXT_MEMBERS = ['txt', 'md', 'text', 'json'];

export interface OrderOptions {
  seed: number;
  shuffle: boolean;
  epochs: number;
  rank: number | undefined;
  worldSize: number | undefined;
  fetch: FetchOptions;
  /** Checked before a JSON Lines document is read. */
  maxDocumentBytes: number;
}

export async function resolveText(source: TextSource, o: OrderOptions): Promise<ResolvedText> {
  if (isParquetSource(source) || isHubSource(source)) {
    const parquet = await (await loadParquetShards())(source, 'text', o.fetch, 'textLoader');
    return shardText(
      { shards: parquet.shards, ...(parquet.shuffleBuffer ? { shuffleBuffer: parquet.shuffleBuffer } : {}) },
      'webdataset',
      o,
      parquet,
    );
  }
  if (isObject(source) && Array.isArray((source as TokenShardSource).tokens)) return shardText(source as TokenShardSource, 'tokens', o);
  if (isObject(source) && Array.isArray((source as TextShardSource).shards)) return shardText(source as TextShardSource, 'webdataset', o);
  if (isObject(source) && Array.isArray((source as InMemoryTexts).texts)) return listText(inMemory(source as InMemoryTexts), o, 'txt');
  if (typeof source === 'string') return listText(await expandJsonl(await textFiles(source, o.maxDocumentBytes), o.maxDocumentBytes), o);
  const resolved = await resolveSource(source as LoaderSource, o.fetch, TEXT_FILES);
  if (resolved.list) return listText(await expandJsonl(resolved.list, o.maxDocumentBytes), o);
  if (resolved.stream) {
    const order = streamOrder(resolved.stream);
    return { order, tokens: false, items: (e, off, n) => mapItems(order.items(e, off, n, noop)), carried: notCarried };
  }
  throw new OptionError('textLoader', 'source', source, 'token shards, text shards, text files or { texts }');
}

const noop = () => {};

function isObject(x: unknown): x is object {
  return typeof x === 'object' && x !== null;
}

function extOf(key: string): string {
  const jsonl = jsonlExt(key);
  if (jsonl) return jsonl;
  const dot = key.lastIndexOf('.');
  return dot > key.lastIndexOf('/') ? key.slice(dot + 1).toLowerCase() : 'txt';
}

/** `ext`, when given, says how the bytes are read whatever the key says (an in-memory text is text, even keyed `a.json`). */
function asText(item: LabelledSource, ext = extOf(item.key)): TextItem {
  return { key: item.key, read: async () => ({ key: item.key, bytes: await item.read(), ext }) };
}

async function* mapItems(items: Iterable<LabelledSource> | AsyncIterable<LabelledSource>): AsyncGenerator<TextItem> {
  for await (const item of items) yield asText(item);
}

function listText(list: readonly LabelledSource[], o: OrderOptions, ext?: string): ResolvedText {
  const order = listOrder(list, o);
  return {
    order,
    tokens: false,
    *items(epoch, offset, epochs) {
      for (const item of order.items(epoch, offset, epochs, noop) as Iterable<LabelledSource>) yield asText(item, ext);
    },
    carried: notCarried,
  };
}

function inMemory(source: InMemoryTexts): LabelledSource[] {
  const encoder = new TextEncoder();
  return source.texts.map((t, i) => {
    const text = typeof t === 'string' ? t : t?.text;
    if (typeof text !== 'string') throw new OptionError('textLoader', `source.texts[${i}]`, t, 'a string or { text, key? }');
    const key = (typeof t === 'object' && t.key) || `text/${i}`;
    return { key, label: -1, read: async () => encoder.encode(text) };
  });
}

/** A text file is one document (a `.jsonl` file one per line); a folder is every text file under it, in path order. */
async function textFiles(path: string, maxDocumentBytes: number): Promise<ListedText[]> {
  const entries = await listDir(path).catch(() => undefined);
  if (entries === undefined) return [{ key: path, path, label: -1, read: () => readBounded(path, maxDocumentBytes) }];
  const files: string[] = [];
  const walk = async (dir: string) => {
    for (const e of (await listDir(dir)).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(full);
      else if (TEXT_FILES.test(e.name)) files.push(full);
    }
  };
  await walk(path);
  if (files.length === 0)
    throw new OptionError('textLoader', 'source', path, 'a folder with .txt, .md, .json or .jsonl files (or a text file)');
  return files.map((f) => ({ key: f, path: f, label: -1, read: () => readBounded(f, maxDocumentBytes) }));
}

/** A text file whole, refused as too-large from its size before a byte of it is read. */
async function readBounded(path: string, maxDocumentBytes: number): Promise<Uint8Array> {
  const file = await openFileRange(path);
  try {
    if (file.size > maxDocumentBytes) throw tooLarge(path, file.size, maxDocumentBytes);
    const bytes = await file.read(0, file.size);
    if (bytes.length !== file.size)
      throw new SourceError('truncated', path, `${path}: read ${bytes.length} of its ${file.size} bytes (it changed meanwhile)`);
    return bytes;
  } finally {
    await file.close();
  }
}

/** One shard sample as a document: its ids (token shards) or its text member. */
function sampleDocument(key: string, files: Record<string, Uint8Array>, format: 'tokens' | 'webdataset'): TextItem {
  if (format === 'tokens') {
    const bytes = files.tokens;
    if (bytes === undefined) return { key, read: () => Promise.reject(new SourceError('unsupported-type', key, `${key}: no tokens`)) };
    const tokens =
      bytes.byteOffset % 4 === 0
        ? new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2)
        : new Uint32Array(bytes.slice().buffer);
    return { key, read: () => Promise.resolve({ key, tokens }) };
  }
  const ext = TEXT_MEMBERS.find((e) => files[e] !== undefined);
  const bytes = ext === undefined ? undefined : files[ext];
  if (ext === undefined || bytes === undefined) {
    const why = new TextError('no-text', `${key}: a sample needs a text member (${TEXT_MEMBERS.join('/')})`);
    return { key, read: () => Promise.reject(why) };
  }
  return { key, read: () => Promise.resolve({ key, bytes, ext }) };
}

/** Both kinds of shards: one ShardStream over all epochs, read once, resumed from its own state. */
function shardText(
  source: TokenShardSource | TextShardSource,
  format: 'tokens' | 'webdataset',
  o: OrderOptions,
  parquet?: ParquetShards,
): ResolvedText {
  const shards = format === 'tokens' ? (source as TokenShardSource).tokens : (source as TextShardSource).shards;
  const field = format === 'tokens' ? 'source.tokens' : 'source.shards';
  const tokenShards = format === 'tokens' ? (source as TokenShardSource).tokenShards : undefined;
  const { order, stream: start } = shardStreamOrder(
    {
      shards,
      field,
      shuffleBuffer: source.shuffleBuffer,
      format,
      ...(parquet ? { parquet } : {}),
      ...(tokenShards === undefined ? {} : { tokenShards }),
    },
    o,
    { loader: 'textLoader', regroup: 'regroupTextStates' },
  );
  async function* items(): AsyncGenerator<TextItem> {
    // A later pass (after a break) continues from the state the loader resumed the order to.
    for await (const item of start()) {
      const key = `${item.shard}#${item.key}`;
      if (isFailure(item)) {
        const error = item.error;
        yield { key, read: () => Promise.reject(error) };
      } else yield sampleDocument(key, item.files, format);
    }
  }
  /** A carried piece's document: its shard read again up to it (`shard#sample`, as the stream names it). */
  const carried = (key: string): TextItem => ({
    key,
    read: async () => {
      const cut = key.lastIndexOf('#');
      const shard = key.slice(0, cut);
      const sample = key.slice(cut + 1);
      const skip = format === 'tokens' && /^\d+$/.test(sample) ? Number(sample) : 0;
      const reader = parquet ? { reader: parquet.reader } : {};
      for await (const item of readShard(shard, skip, { open: defaultOpener(o.fetch), format, ...reader })) {
        if (item.key !== sample) continue;
        if (isFailure(item)) throw item.error;
        return sampleDocument(key, item.files, format).read();
      }
      throw new SourceError('truncated', key, `${key}: not in its shard any more (carried by a regroup)`);
    },
  });
  return { order, tokens: format === 'tokens', items, carried, ...(parquet ? { close: () => parquet.close() } : {}) };
}

export { startOf };
