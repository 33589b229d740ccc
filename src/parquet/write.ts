// Writing what the loaders read: labelled images (or text documents) as Hub-shaped Parquet shards,
// `<out>/<config>/<split>/NNNN.parquet`, as the Hub's conversion lays them out. An image is the
// Hub's Image struct `{ bytes, path }`, a label an INT64 ClassLabel whose names go in the file's
// `huggingface` key-value metadata; a document a string column `text`. One file's rows are held at
// a time, so memory is `rowsPerFile` items, whatever the dataset's size.
import { OptionChecker, OptionError } from '../errors/index.ts';
import { makeDir, writeFileAtomic } from '../runtime/index.ts';

/** One row: an image's bytes and label, or a document's text. */
export type ParquetRow = { key: string; bytes: Uint8Array; label: number } | { key: string; text: string };

/** Snappy and none always; gzip and brotli where node:zlib is (Node, Deno); zstd where it has zstd too. */
export type ParquetCompression = 'snappy' | 'gzip' | 'brotli' | 'zstd' | 'none';

export interface WriteParquetOptions {
  /** The folder the `<config>/<split>/` files go under. */
  out: string;
  /** Class names by label (the ClassLabel's names); required for image rows. */
  classes?: readonly string[];
  config?: string;
  split?: string;
  /** Rows per row group (default 256 for images, 1000 for text: a few MB a group). */
  rowsPerGroup?: number;
  /** Rows per file (default 8192). */
  rowsPerFile?: number;
  compression?: ParquetCompression;
  /** Called after each file is written. */
  onFile?: (file: { path: string; rows: number; bytes: number }) => void;
}

export interface WrittenParquet {
  files: string[];
  rows: number;
  bytes: number;
}

type Compressor = (input: Uint8Array) => Uint8Array;
type Zlib = Record<string, ((input: Uint8Array) => Uint8Array) | undefined>;

async function compressorFor(compression: ParquetCompression): Promise<{ codec: string; compressors: Record<string, Compressor> }> {
  if (compression === 'snappy') return { codec: 'SNAPPY', compressors: {} };
  if (compression === 'none') return { codec: 'UNCOMPRESSED', compressors: {} };
  // A computed specifier keeps bundlers from pulling node:zlib into browser builds.
  const spec = ['node', 'zlib'].join(':');
  const zlib = (await import(/* @vite-ignore */ /* webpackIgnore: true */ spec)) as Zlib;
  const name = { gzip: 'gzipSync', brotli: 'brotliCompressSync', zstd: 'zstdCompressSync' }[compression];
  const fn = zlib[name];
  if (typeof fn !== 'function')
    throw new OptionError(
      'writeParquet options',
      'compression',
      compression,
      `a codec this runtime compresses (no ${name} here; snappy, gzip or brotli)`,
    );
  return { codec: compression.toUpperCase(), compressors: { [compression.toUpperCase()]: (input) => new Uint8Array(fn(input)) } };
}

/**
 * Writes `rows` as Hub-shaped Parquet files; all rows must be of one kind (images or text).
 * Returns the files written, in order. Node and Deno (it writes local files).
 */
export async function writeParquet(
  rows: AsyncIterable<ParquetRow> | Iterable<ParquetRow>,
  options: WriteParquetOptions,
): Promise<WrittenParquet> {
  const o = new OptionChecker('writeParquet options', options, [
    'out',
    'classes',
    'config',
    'split',
    'rowsPerGroup',
    'rowsPerFile',
    'compression',
    'onFile',
  ]);
  if (typeof options.out !== 'string' || options.out === '') o.fail('out', 'a folder path');
  const config = o.raw('config') ?? 'default';
  const split = o.raw('split') ?? 'train';
  for (const [field, value] of [
    ['config', config],
    ['split', split],
  ] as const)
    if (typeof value !== 'string' || !/^[\w.-]+$/.test(value)) o.fail(field, 'a name of letters, digits, dots, dashes and underscores');
  const rowsPerFile = o.integer('rowsPerFile', 8192, 1, 1 << 24);
  const compression = o.oneOf<ParquetCompression>('compression', 'snappy', ['snappy', 'gzip', 'brotli', 'zstd', 'none']);
  const classes = options.classes;
  const { parquetWriteBuffer } = await import('hyparquet-writer');
  const { codec, compressors } = await compressorFor(compression);
  const dir = `${options.out.replace(/\/+$/, '')}/${config}/${split}`;
  await makeDir(dir);
  const written: WrittenParquet = { files: [], rows: 0, bytes: 0 };
  let kind: 'image' | 'text' | undefined;
  let batch: ParquetRow[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const path = `${dir}/${String(written.files.length).padStart(4, '0')}.parquet`;
    const rowsPerGroup = o.integer('rowsPerGroup', kind === 'text' ? 1000 : 256, 1, 1 << 24);
    const bytes = new Uint8Array(
      parquetWriteBuffer({
        ...(kind === 'text' ? textColumns(batch) : imageColumns(batch, classes ?? [])),
        rowGroupSize: rowsPerGroup,
        codec: codec as 'SNAPPY',
        compressors,
        createdBy: 'tandem',
      }),
    );
    await writeFileAtomic(path, bytes);
    written.files.push(path);
    written.rows += batch.length;
    written.bytes += bytes.length;
    options.onFile?.({ path, rows: batch.length, bytes: bytes.length });
    batch = [];
  };
  for await (const row of rows) {
    const rowKind = 'text' in row ? 'text' : 'image';
    kind ??= rowKind;
    if (rowKind !== kind) o.fail('rows', `rows of one kind (a ${kind} row, then a ${rowKind} row: ${row.key})`);
    if (rowKind === 'image' && classes === undefined) o.fail('classes', 'the class names, for image rows');
    batch.push(row);
    if (batch.length >= rowsPerFile) await flush();
  }
  await flush();
  return written;
}

function imageColumns(rows: readonly ParquetRow[], classes: readonly string[]) {
  const features = { info: { features: { image: { _type: 'Image' }, label: { _type: 'ClassLabel', names: classes } } } };
  return {
    columnData: [
      { name: 'image', data: rows.map((r) => ('bytes' in r ? { bytes: r.bytes, path: r.key } : null)) },
      { name: 'label', data: rows.map((r) => BigInt('label' in r ? r.label : -1)) },
    ],
    schema: [
      { name: 'root', num_children: 2 },
      { name: 'image', repetition_type: 'OPTIONAL' as const, num_children: 2 },
      { name: 'bytes', type: 'BYTE_ARRAY' as const, repetition_type: 'OPTIONAL' as const },
      { name: 'path', type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const, repetition_type: 'OPTIONAL' as const },
      { name: 'label', type: 'INT64' as const, repetition_type: 'REQUIRED' as const },
    ],
    kvMetadata: [{ key: 'huggingface', value: JSON.stringify(features) }],
  };
}

function textColumns(rows: readonly ParquetRow[]) {
  const features = { info: { features: { text: { _type: 'Value', dtype: 'string' } } } };
  return {
    columnData: [{ name: 'text', data: rows.map((r) => ('text' in r ? r.text : '')), type: 'STRING' as const }],
    kvMetadata: [{ key: 'huggingface', value: JSON.stringify(features) }],
  };
}
