// One row group, some of its columns: the column chunks' byte ranges are checked against the file
// and the limit, fetched (only those, merged where little lies between), their page headers walked
// (sizes inside the chunk and under the limit, exactly the footer's row count), and only then
// handed to hyparquet to decompress and decode, from memory.
import { type AsyncBuffer, type ColumnChunk, type Compressors, parquetRead } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import { asError } from '../errors/index.ts';
import type { ByteSource } from './bytes.ts';
import { ParquetError } from './errors.ts';
import type { Footer } from './footer.ts';

interface Range {
  start: number;
  end: number;
}

interface Chunk extends Range {
  column: string;
  uncompressed: number;
}

/** Chunks closer than this are fetched as one range, as hyparquet plans them. */
const GAP_BYTES = 1 << 13;
/** Merged ranges stop growing past this. */
const MERGE_BYTES = 1 << 21;

export interface GroupRead {
  source: ByteSource;
  footer: Footer;
  group: number;
  firstRow: number;
  rows: number;
  columns: readonly string[];
  maxChunkBytes: number;
  compressors: Compressors;
  signal?: AbortSignal;
}

/** The asked columns' chunks of the group, each checked against the file and the limit. */
function groupChunks(read: GroupRead): Chunk[] {
  const { source, footer, group, rows, columns, maxChunkBytes } = read;
  const fail = (code: 'footer' | 'limit' | 'column', message: string) =>
    new ParquetError(code, source.name, message, { rowGroup: group, rows });
  const chunks: Chunk[] = [];
  const rowGroup = footer.metadata.row_groups[group];
  const found = new Set<string>();
  for (const chunk of (rowGroup?.columns ?? []) as ColumnChunk[]) {
    const meta = chunk.meta_data;
    const column = meta?.path_in_schema?.[0];
    if (!meta || column === undefined) throw fail('footer', 'a column chunk without metadata');
    if (!columns.includes(column)) continue;
    if (chunk.file_path)
      throw fail('column', `column '${column}' is stored in another file (${chunk.file_path}), which Tandem does not read`);
    found.add(column);
    const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
    const size = Number(meta.total_compressed_size);
    const uncompressed = Number(meta.total_uncompressed_size);
    const where = `column '${meta.path_in_schema.join('.')}'`;
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(size) || start < 4 || size < 0 || start + size > footer.metadataStart)
      throw fail('footer', `${where}: its chunk (${size} bytes at ${start}) lies outside the file's data (${footer.metadataStart} bytes)`);
    if (size > maxChunkBytes || uncompressed > maxChunkBytes)
      throw fail(
        'limit',
        `${where}: its chunk is ${size} bytes (${uncompressed} decompressed), over maxColumnChunkBytes (${maxChunkBytes})`,
      );
    chunks.push({ column, start, end: start + size, uncompressed });
  }
  const missing = columns.find((c) => !found.has(c));
  if (missing !== undefined && rows > 0) throw fail('footer', `column '${missing}' has no chunk in this row group`);
  return chunks;
}

function mergeRanges(chunks: readonly Range[]): Range[] {
  const merged: Range[] = [];
  for (const { start, end } of [...chunks].sort((a, b) => a.start - b.start)) {
    const last = merged[merged.length - 1];
    if (last && start <= last.end + GAP_BYTES && Math.max(last.end, end) - last.start <= MERGE_BYTES) last.end = Math.max(last.end, end);
    else merged.push({ start, end });
  }
  return merged;
}

/**
 * Walks a chunk's page headers without decoding: every page inside the chunk, the chunk's pages
 * together decompressing to no more than the limit (each page alone could stay under it), and data
 * pages holding exactly `rows` values (the asked columns are never repeated, so a value is a row).
 * A footer claiming rows its pages lack stops here. Pages past the last row are walked too (the
 * reader decodes a struct's leaves to the chunk's end); bytes there that are no page end the walk.
 */
function checkPages(read: GroupRead, chunk: Chunk, bytes: Uint8Array): void {
  const fail = (code: 'page' | 'limit', message: string) =>
    new ParquetError(code, read.source.name, `column '${chunk.column}': ${message}`, { rowGroup: read.group, rows: read.rows });
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
  let values = 0;
  let total = 0;
  while (reader.offset < bytes.length) {
    let header: ReturnType<typeof parquetHeader>;
    try {
      header = parquetHeader(reader);
    } catch (error) {
      if (values === read.rows) break;
      throw fail('page', `a page header at byte ${chunk.start + reader.offset} does not parse: ${asError(error).message}`);
    }
    const size = header.compressed_page_size;
    const decompressed = header.uncompressed_page_size;
    if (!(size >= 0) || reader.offset + size > bytes.length) throw fail('page', `a page of ${size} bytes runs past its column chunk`);
    if (!(decompressed >= 0)) throw fail('page', `a page declares ${decompressed} bytes decompressed`);
    total += decompressed;
    if (total > read.maxChunkBytes)
      throw fail('limit', `its pages declare ${total} bytes decompressed so far, over maxColumnChunkBytes (${read.maxChunkBytes})`);
    const count = header.data_page_header?.num_values ?? header.data_page_header_v2?.num_rows ?? 0;
    if (header.type === 'DATA_PAGE' || header.type === 'DATA_PAGE_V2') {
      if (!(count >= 0) || values + count > read.rows) throw fail('page', `the pages hold more values than the footer's ${read.rows} rows`);
      values += count;
    }
    reader.offset += size;
  }
  if (values !== read.rows) throw fail('page', `the pages hold ${values} values, the footer says ${read.rows} rows`);
}

/** An ArrayBuffer of exactly these bytes, without a copy when the view is the whole buffer. */
function exactBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer
    ? bytes.buffer
    : bytes.slice().buffer;
}

/**
 * The fetched ranges as hyparquet's file. hyparquet plans the same merged ranges, so its reads land
 * inside them; one that does not (a planner that changed) is read from the source.
 */
function memoryFile(read: GroupRead, fetched: ReadonlyArray<{ range: Range; bytes: Uint8Array }>): AsyncBuffer {
  const { size } = read.source;
  return {
    byteLength: size,
    slice(start: number, end = size) {
      const hit = fetched.find(({ range }) => range.start <= start && end <= range.end);
      if (!hit) return read.source.read(start, end, read.signal).then(exactBuffer);
      const { range, bytes } = hit;
      return range.start === start && range.end === end ? exactBuffer(bytes) : bytes.slice(start - range.start, end - range.start).buffer;
    },
  };
}

/** The asked columns' decoded values (hyparquet's), each exactly `rows` long. */
export async function readGroupColumns(read: GroupRead): Promise<Map<string, unknown[]>> {
  const { source, rows, group } = read;
  const out = new Map<string, unknown[]>(read.columns.map((c) => [c, []]));
  if (rows === 0) return out;
  const chunks = groupChunks(read);
  const ranges = mergeRanges(chunks);
  const fetched = await Promise.all(
    ranges.map(async (range) => ({ range, bytes: await source.read(range.start, range.end, read.signal) })),
  );
  for (const chunk of chunks) {
    const { range, bytes } = fetched.find((f) => f.range.start <= chunk.start && chunk.end <= f.range.end) ?? {};
    if (!range || !bytes)
      throw new ParquetError('page', source.name, `column '${chunk.column}' was not fetched`, { rowGroup: group, rows });
    checkPages(read, chunk, bytes.subarray(chunk.start - range.start, chunk.end - range.start));
  }
  try {
    await parquetRead({
      file: memoryFile(read, fetched),
      metadata: read.footer.metadata,
      columns: [...read.columns],
      rowStart: read.firstRow,
      rowEnd: read.firstRow + rows,
      compressors: read.compressors,
      utf8: false, // binary columns (image bytes) stay Uint8Array; UTF8 ones are still strings
      onChunk({ columnName, columnData, rowStart }) {
        const values = out.get(columnName);
        if (!values) return;
        const at = rowStart - read.firstRow;
        for (let i = 0; i < columnData.length; i++) values[at + i] = columnData[i];
      },
    });
  } catch (error) {
    if (read.signal?.aborted) throw read.signal.reason;
    if (error instanceof ParquetError) throw error;
    throw new ParquetError('page', source.name, `does not decode: ${asError(error).message}`, { rowGroup: group, rows, cause: error });
  }
  for (const [column, values] of out) {
    if (values.length !== rows)
      throw new ParquetError('page', source.name, `column '${column}' decoded to ${values.length} values, the footer says ${rows} rows`, {
        rowGroup: group,
        rows,
      });
  }
  return out;
}
