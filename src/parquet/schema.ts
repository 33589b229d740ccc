// What Tandem reads of a Parquet schema: each top-level column's kind, and its decoded values as the
// plain values a loader uses (bytes, strings, numbers, booleans, null). Types a loader does not use
// (dates, decimals, lists, maps, JSON) are `other` and refused by name when asked for.
import type { SchemaElement, SchemaTree } from 'hyparquet';

/** A top-level column's kind: `image` is the Hub's `{bytes, path}` struct, read as its bytes. */
export type ColumnKind = 'image' | 'binary' | 'string' | 'integer' | 'float' | 'boolean' | 'other';

export type CellValue = Uint8Array | string | number | boolean | null;

const INTEGER_CONVERTED = new Set(['INT_8', 'INT_16', 'INT_32', 'INT_64', 'UINT_8', 'UINT_16', 'UINT_32', 'UINT_64']);

function leafKind(element: SchemaElement): ColumnKind {
  const converted = element.converted_type;
  const logical = element.logical_type?.type;
  if (element.repetition_type === 'REPEATED') return 'other';
  switch (element.type) {
    case 'BOOLEAN':
      return 'boolean';
    case 'INT32':
    case 'INT64':
      return (converted === undefined || INTEGER_CONVERTED.has(converted)) && (logical === undefined || logical === 'INTEGER')
        ? 'integer'
        : 'other';
    case 'FLOAT':
    case 'DOUBLE':
      return converted === undefined && logical === undefined ? 'float' : 'other';
    case 'BYTE_ARRAY':
      if (converted === 'UTF8' || converted === 'ENUM' || logical === 'STRING' || logical === 'ENUM') return 'string';
      return converted === undefined && logical === undefined ? 'binary' : 'other';
    case 'FIXED_LEN_BYTE_ARRAY':
      if (logical === 'FLOAT16') return 'float';
      return converted === undefined && logical === undefined ? 'binary' : 'other';
    default:
      return 'other'; // INT96 timestamps, or no type at all
  }
}

/** The kind of one top-level column of the schema tree. */
export function columnKind(node: SchemaTree): ColumnKind {
  const { element, children } = node;
  if (children.length === 0) return leafKind(element);
  if (element.repetition_type === 'REPEATED' || element.converted_type !== undefined || element.logical_type !== undefined) return 'other';
  // The datasets library's Image (and Audio) feature: {bytes: binary, path: string}.
  const bytes = children.find((c) => c.element.name === 'bytes');
  const othersArePath = children.every((c) => c === bytes || (c.element.name === 'path' && columnKind(c) === 'string'));
  return bytes && columnKind(bytes) === 'binary' && othersArePath ? 'image' : 'other';
}

export function columnKinds(schema: SchemaTree): Map<string, ColumnKind> {
  return new Map(schema.children.map((child) => [child.element.name, columnKind(child)]));
}

const utf8 = new TextDecoder();

/**
 * Bytes the caller owns whole: hyparquet's values are views into the fetched column chunk, and a
 * caller that transfers `bytes.buffer` to a worker would detach every other value of the chunk.
 */

const MIN = BigInt(Number.MIN_SAFE_INTEGER);
const MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** One value as `kind`'s plain value (nulls as null), or a string saying why it cannot be. */
function convertValue(kind: ColumnKind, raw: unknown): CellValue | { error: string } {
  if (raw === null || raw === undefined) return null;
  switch (kind) {
    case 'image': {
      const bytes = (raw as { bytes?: unknown }).bytes;
      if (bytes === null || bytes === undefined) return null;
      return bytes instanceof Uint8Array ? bytes : { error: 'an image struct whose bytes are not bytes' };
    }
    case 'binary':
      return raw instanceof Uint8Array ? raw : { error: `a binary value of type ${typeof raw}` };
    case 'string':
      if (typeof raw === 'string') return raw;
      return raw instanceof Uint8Array ? utf8.decode(raw) : { error: `a string value of type ${typeof raw}` };
    case 'integer':
      if (typeof raw === 'bigint') return raw >= MIN && raw <= MAX ? Number(raw) : { error: `the integer ${raw} does not fit in 2^53` };
      return typeof raw === 'number' ? raw : { error: `an integer value of type ${typeof raw}` };
    case 'float':
      return typeof raw === 'number' ? raw : { error: `a float value of type ${typeof raw}` };
    case 'boolean':
      return typeof raw === 'boolean' ? raw : { error: `a boolean value of type ${typeof raw}` };
    default:
      return { error: 'a column of a type Tandem does not read' };
  }
}

/** A decoded column as `kind`'s plain values, or why one of them (`row`) cannot be given. */
export function convertColumn(kind: ColumnKind, data: ArrayLike<unknown>): CellValue[] | { error: string; row: number } {
  const out = new Array<CellValue>(data.length);
  for (let row = 0; row < data.length; row++) {
    const value = convertValue(kind, data[row]);
    if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) return { error: value.error, row };
    out[row] = value;
  }
  return out;
}
