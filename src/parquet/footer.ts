// A Parquet file's footer: `<metadata><4-byte length>PAR1` at its end. The length is checked against
// the file and the limit before the metadata is read, the metadata is parsed by hyparquet, and what
// the row-group table says (rows, column chunk ranges) is checked before anything trusts it.
import { type FileMetaData, parquetMetadata, parquetSchema, type SchemaTree } from 'hyparquet';
import { asError } from '../errors/index.ts';
import type { ByteSource } from './bytes.ts';
import { ParquetError } from './errors.ts';

export interface Footer {
  readonly metadata: FileMetaData;
  readonly schema: SchemaTree;
  /** Where the metadata starts: every column chunk must end before it. */
  readonly metadataStart: number;
  /** Rows of each row group, in order. */
  readonly groupRows: readonly number[];
  /** The `huggingface` key-value metadata, if any. */
  readonly huggingface: string | undefined;
}

const MAGIC = 0x31524150; // "PAR1", little-endian

/** Reads and checks the footer of `source`; every failure is a ParquetError `footer` or `limit`. */
export async function readFooter(source: ByteSource, maxFooterBytes: number, signal?: AbortSignal): Promise<Footer> {
  const { name, size } = source;
  const fail = (message: string, cause?: unknown) => new ParquetError('footer', name, message, { cause });
  // Magic at both ends plus the length word.
  if (size < 12) throw fail(`${size} bytes is too small for a Parquet file (at least 12: truncated, or not Parquet)`);
  const tailStart = size - source.tail.length;
  const bytesAt = async (start: number, end: number) =>
    start >= tailStart ? source.tail.subarray(start - tailStart, end - tailStart) : source.read(start, end, signal);
  const last = await bytesAt(size - 8, size);
  const view = new DataView(last.buffer, last.byteOffset, 8);
  if (view.getUint32(4, true) !== MAGIC) throw fail('the file does not end with PAR1: truncated, or not Parquet');
  const length = view.getUint32(0, true);
  if (length > size - 12) throw fail(`the footer length (${length} bytes) points outside the file (${size} bytes): truncated or corrupt`);
  if (length > maxFooterBytes)
    throw new ParquetError('limit', name, `the footer is ${length} bytes, over maxFooterBytes (${maxFooterBytes})`);
  const metadataStart = size - 8 - length;
  const footer = await bytesAt(metadataStart, size);
  let metadata: FileMetaData;
  let schema: SchemaTree;
  try {
    metadata = parquetMetadata(footer);
    schema = parquetSchema(metadata);
  } catch (error) {
    throw fail(`the footer does not parse: ${asError(error).message}`, error);
  }
  const groupRows: number[] = [];
  for (const [index, group] of (metadata.row_groups ?? []).entries()) {
    const rows = Number(group.num_rows);
    if (!Number.isSafeInteger(rows) || rows < 0) throw fail(`row group ${index} claims ${group.num_rows} rows`);
    groupRows.push(rows);
  }
  if (!Number.isSafeInteger(groupRows.reduce((a, b) => a + b, 0))) throw fail('the row groups hold more than 2^53 rows');
  const names = schema.children.map((c) => c.element.name);
  if (names.length === 0) throw fail('the schema has no columns');
  if (!names.every((n) => typeof n === 'string' && n !== '') || new Set(names).size !== names.length)
    throw fail('the schema has unnamed or repeated columns');
  const huggingface = metadata.key_value_metadata?.find((kv) => kv.key === 'huggingface')?.value;
  return { metadata, schema, metadataStart, groupRows, huggingface };
}
