// The Parquet tests' files: one table (every column kind, nulls, bytes that are not UTF-8) and a
// table of Hub-style images, written by two independent writers: hyparquet-writer, and arrow-rs's
// writer compiled to wasm (parquet-wasm, fed through apache-arrow). Plus what the tests look at in a
// file's bytes: its page kinds, and a footer edited to claim other row counts.
import * as arrow from 'apache-arrow';
import { parquetMetadata } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import { parquetWriteBuffer } from 'hyparquet-writer';
import * as pw from 'parquet-wasm/esm';
import { readFile } from '../../src/runtime/index.ts';
import { check } from './assert.ts';

/** A deterministic byte generator (xorshift), so every tier writes the same files. */
export function bytesOf(seed: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed * 2654435761 + 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

export interface Table {
  id: bigint[];
  label: (number | null)[];
  text: (string | null)[];
  /** Bytes that are not UTF-8 (0xff 0xfe …): decoding them as text would change them. */
  blob: (Uint8Array | null)[];
  score: (number | null)[];
  flag: (boolean | null)[];
}

export function table(rows: number, offset = 0): Table {
  const t: Table = { id: [], label: [], text: [], blob: [], score: [], flag: [] };
  for (let r = offset; r < offset + rows; r++) {
    t.id.push(BigInt(r) * 1_000_003n);
    t.label.push(r % 5 === 4 ? null : r % 3);
    t.text.push(r % 4 === 3 ? null : `row ${r} ✓ ${'x'.repeat(r % 7)}`);
    const blob = bytesOf(r + 1, 8 + (r % 5) * 3);
    blob[0] = 0xff;
    blob[1] = 0xfe;
    t.blob.push(r % 6 === 5 ? null : blob);
    t.score.push(r % 7 === 6 ? null : r / 4);
    t.flag.push(r % 8 === 7 ? null : r % 2 === 0);
  }
  return t;
}

export const COLUMNS = ['id', 'label', 'text', 'blob', 'score', 'flag'] as const;

export function hyparquetFile(
  t: Table,
  options: { rowGroupSize: number; codec?: 'SNAPPY' | 'UNCOMPRESSED'; metadata?: string },
): Uint8Array {
  return new Uint8Array(
    parquetWriteBuffer({
      columnData: [
        { name: 'id', data: t.id, type: 'INT64' },
        { name: 'label', data: t.label, type: 'INT32' },
        { name: 'text', data: t.text, type: 'STRING' },
        { name: 'blob', data: t.blob, type: 'BYTE_ARRAY' },
        { name: 'score', data: t.score, type: 'DOUBLE' },
        { name: 'flag', data: t.flag, type: 'BOOLEAN' },
      ],
      rowGroupSize: options.rowGroupSize,
      codec: options.codec ?? 'SNAPPY',
      kvMetadata: options.metadata ? [{ key: 'huggingface', value: options.metadata }] : undefined,
    }),
  );
}

let wasmReady: Promise<void> | undefined;
function parquetWasm(): Promise<void> {
  const wasm = new URL('../../node_modules/parquet-wasm/esm/parquet_wasm_bg.wasm', import.meta.url);
  // Node and Deno read it from disk; a browser page fetches it from the test server.
  wasmReady ??=
    wasm.protocol === 'file:'
      ? readFile(wasm.pathname).then((bytes) => {
          pw.initSync({ module: bytes });
        })
      : pw.default({ module_or_path: wasm }).then(() => undefined);
  return wasmReady;
}

export type Codec = 'UNCOMPRESSED' | 'SNAPPY' | 'GZIP' | 'BROTLI' | 'ZSTD' | 'LZ4_RAW';
export interface ArrowOptions {
  rowGroupSize: number;
  codec?: Codec;
  pageVersion?: 1 | 2;
  dictionary?: boolean;
  metadata?: string;
}

function arrowWrite(columns: Record<string, arrow.Vector>, options: ArrowOptions): Uint8Array {
  const ipc = arrow.tableToIPC(new arrow.Table(columns), 'stream');
  let props = new pw.WriterPropertiesBuilder()
    .setCompression(pw.Compression[options.codec ?? 'SNAPPY'])
    .setWriterVersion(options.pageVersion === 2 ? pw.WriterVersion.V2 : pw.WriterVersion.V1)
    .setDictionaryEnabled(options.dictionary ?? true)
    .setMaxRowGroupSize(options.rowGroupSize);
  if (options.metadata) props = props.setKeyValueMetadata(new Map([['huggingface', options.metadata]]));
  return pw.writeParquet(pw.Table.fromIPCStream(ipc), props.build());
}

/** The same table through apache-arrow and arrow-rs's writer (parquet-wasm). */
export async function arrowFile(t: Table, options: ArrowOptions): Promise<Uint8Array> {
  await parquetWasm();
  return arrowWrite(
    {
      id: arrow.vectorFromArray(t.id, new arrow.Int64()),
      label: arrow.vectorFromArray(t.label, new arrow.Int32()),
      text: arrow.vectorFromArray(t.text, new arrow.Utf8()),
      blob: arrow.vectorFromArray(t.blob, new arrow.Binary()),
      score: arrow.vectorFromArray(t.score, new arrow.Float64()),
      flag: arrow.vectorFromArray(t.flag, new arrow.Bool()),
    },
    options,
  );
}

export interface Images {
  image: ({ bytes: Uint8Array | null; path: string | null } | null)[];
  label: number[];
}

export function images(rows: number, size: number): Images {
  const out: Images = { image: [], label: [] };
  for (let r = 0; r < rows; r++) {
    out.label.push(r % 3);
    if (r === 3) out.image.push(null);
    else if (r === 5) out.image.push({ bytes: null, path: 'only-a-path.jpg' });
    else out.image.push({ bytes: bytesOf(100 + r, size + r), path: `img${r}.jpg` });
  }
  return out;
}

export const IMAGE_FEATURES = JSON.stringify({
  info: { features: { image: { _type: 'Image' }, label: { names: ['cat', 'dog', 'bird'], _type: 'ClassLabel' } } },
});

export async function arrowImageFile(t: Images, options: ArrowOptions): Promise<Uint8Array> {
  await parquetWasm();
  const struct = new arrow.Struct([new arrow.Field('bytes', new arrow.Binary(), true), new arrow.Field('path', new arrow.Utf8(), true)]);
  return arrowWrite(
    { image: arrow.vectorFromArray(t.image, struct), label: arrow.vectorFromArray(t.label.map(BigInt), new arrow.Int64()) },
    options,
  );
}

export function hyparquetImageFile(t: Images, rowGroupSize: number): Uint8Array<ArrayBuffer> {
  return hubStructFile('image', t.image, t.label, rowGroupSize, IMAGE_FEATURES);
}

/**
 * A Hub-shaped file of one `{ bytes, path }` struct column named `column` (the Hub's Image or Video
 * feature) and an INT64 `label`, with `features` as its `huggingface` metadata.
 */
export function hubStructFile(
  column: string,
  values: ({ bytes: Uint8Array | null; path: string | null } | null)[],
  labels: number[],
  rowGroupSize: number,
  features: string,
): Uint8Array<ArrayBuffer> {
  return new Uint8Array(
    parquetWriteBuffer({
      columnData: [
        { name: column, data: values },
        { name: 'label', data: labels.map(BigInt) },
      ],
      schema: [
        { name: 'root', num_children: 2 },
        { name: column, repetition_type: 'OPTIONAL', num_children: 2 },
        { name: 'bytes', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' },
        { name: 'path', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
        { name: 'label', type: 'INT64', repetition_type: 'REQUIRED' },
      ],
      rowGroupSize,
      kvMetadata: [{ key: 'huggingface', value: features }],
    }),
  );
}

/** Each column chunk's page types and encodings in row group 0, as `type:encoding` (hyparquet's header reader). */
export function pageKinds(file: Uint8Array): string[] {
  const footerLength = new DataView(file.buffer, file.byteOffset).getUint32(file.length - 8, true);
  const metadata = parquetMetadata(file.slice(file.length - 8 - footerLength).buffer);
  const kinds = new Set<string>();
  for (const chunk of metadata.row_groups[0]?.columns ?? []) {
    const meta = chunk.meta_data;
    if (!meta) continue;
    const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
    const reader = { view: new DataView(file.buffer, file.byteOffset + start, Number(meta.total_compressed_size)), offset: 0 };
    while (reader.offset < reader.view.byteLength) {
      const header = parquetHeader(reader);
      kinds.add(
        `${header.type}:${header.data_page_header?.encoding ?? header.data_page_header_v2?.encoding ?? header.dictionary_page_header?.encoding}`,
      );
      reader.offset += header.compressed_page_size;
    }
  }
  return [...kinds].sort();
}

/** A thrift compact i64's zigzag varint. */
function zigzagVarint(value: number): number[] {
  let v = value * 2;
  const out: number[] = [];
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

/**
 * The file with one i64 of its footer changed from `from` to `to`, the two of the same varint
 * length: a thrift i64 field (header 0x16: next field, type i64) followed by its zigzag varint. The
 * same bytes also start other fields, so each candidate is tried and the one after which `read`
 * (of the footer as hyparquet reads it) gives `to` is kept.
 */
function withFooterI64(
  file: Uint8Array,
  from: number,
  to: number,
  read: (metadata: ReturnType<typeof parquetMetadata>) => number,
): Uint8Array {
  const was = zigzagVarint(from);
  const now = zigzagVarint(to);
  check(was.length === now.length, `${from} and ${to} take varints of one length`);
  const footerLength = new DataView(file.buffer, file.byteOffset).getUint32(file.length - 8, true);
  const start = file.length - 8 - footerLength;
  for (let at = start; at < file.length - 8 - was.length; at++) {
    if (file[at] !== 0x16 || was.some((b, i) => file[at + 1 + i] !== b)) continue;
    const out = file.slice();
    out.set(now, at + 1);
    if (read(parquetMetadata(out.slice(start).buffer)) === to) return out;
  }
  throw new Error(`no i64 of ${from} found in the footer`);
}

/** The file with row group `group`'s row count changed from `from` to `to` in its footer. */
export function withGroupRows(file: Uint8Array, group: number, from: number, to: number): Uint8Array {
  return withFooterI64(file, from, to, (m) => Number(m.row_groups[group]?.num_rows));
}

/** The file with row group 0's first column chunk declaring `to` bytes decompressed (a footer that under-declares its pages). */
export function withChunkUncompressed(file: Uint8Array, to: number): Uint8Array {
  const footerLength = new DataView(file.buffer, file.byteOffset).getUint32(file.length - 8, true);
  const total = (m: ReturnType<typeof parquetMetadata>) => Number(m.row_groups[0]?.columns[0]?.meta_data?.total_uncompressed_size);
  return withFooterI64(file, total(parquetMetadata(file.slice(file.length - 8 - footerLength).buffer)), to, total);
}
