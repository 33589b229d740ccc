// The safetensors container (the Hugging Face and timm weight format): an 8-byte little-endian
// header length, a JSON header naming each tensor's dtype, shape and byte range, then the bytes.
// Read into float32 (F32, F16, BF16 and F64 are converted), written as F32. Every check happens
// on the header, before any tensor is copied.
import { CodedError } from '../errors/index.ts';

export type WeightsErrorCode = 'malformed' | 'truncated' | 'dtype' | 'missing-tensor' | 'unexpected-tensor' | 'shape';

/** A weights file that cannot be used: its container is broken, or its tensors do not fit the model. */
export class WeightsError extends CodedError<WeightsErrorCode> {
  override readonly name = 'WeightsError';
}

export interface NamedTensor {
  shape: number[];
  data: Float32Array;
}

/** Tensors by name, in file order, and the header's string metadata. */
export interface Safetensors {
  tensors: Map<string, NamedTensor>;
  metadata: Record<string, string>;
}

/** The reference implementation refuses headers over 100 MB; so does this reader. */
const MAX_HEADER_BYTES = 100_000_000;
const DTYPE_BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2, F64: 8 };
/** The file is little-endian; on a little-endian machine (all of today's) F32 bytes are copied whole. */
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

interface HeaderEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

function isHeaderEntry(value: unknown): value is HeaderEntry {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const isCount = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
  return (
    typeof v.dtype === 'string' &&
    Array.isArray(v.shape) &&
    v.shape.every(isCount) &&
    Array.isArray(v.data_offsets) &&
    v.data_offsets.length === 2 &&
    v.data_offsets.every(isCount)
  );
}

/** Parses a safetensors file; every tensor comes back as float32. */
export function readSafetensors(bytes: Uint8Array): Safetensors {
  if (bytes.byteLength < 8)
    throw new WeightsError('truncated', `safetensors: ${bytes.byteLength} bytes, shorter than the 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerBytes = Number(view.getBigUint64(0, true));
  if (headerBytes > MAX_HEADER_BYTES)
    throw new WeightsError('malformed', `safetensors: header of ${headerBytes} bytes (at most ${MAX_HEADER_BYTES})`);
  if (8 + headerBytes > bytes.byteLength)
    throw new WeightsError(
      'truncated',
      `safetensors: header of ${headerBytes} bytes, but the file has ${bytes.byteLength - 8} after the length`,
    );
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + headerBytes)));
  } catch (error) {
    throw new WeightsError('malformed', `safetensors: header is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    throw new WeightsError('malformed', 'safetensors: header is not an object');
  const body = bytes.subarray(8 + headerBytes);
  const metadata: Record<string, string> = {};
  const entries: [string, HeaderEntry][] = [];
  for (const [name, value] of Object.entries(header)) {
    if (name === '__metadata__') {
      for (const [k, v] of Object.entries((value ?? {}) as Record<string, unknown>)) if (typeof v === 'string') metadata[k] = v;
      continue;
    }
    if (!isHeaderEntry(value)) throw new WeightsError('malformed', `safetensors: tensor ${name} lacks a dtype, shape or data_offsets`);
    const size = DTYPE_BYTES[value.dtype];
    if (size === undefined)
      throw new WeightsError('dtype', `safetensors: tensor ${name} is ${value.dtype}; Tandem reads F32, F16, BF16 and F64`);
    const [begin, end] = value.data_offsets;
    const count = value.shape.reduce((a, b) => a * b, 1);
    if (end < begin || end - begin !== count * size)
      throw new WeightsError(
        'malformed',
        `safetensors: tensor ${name} [${value.shape}] ${value.dtype} spans bytes ${begin}..${end}, not ${count * size}`,
      );
    if (end > body.byteLength)
      throw new WeightsError('truncated', `safetensors: tensor ${name} ends at byte ${end} of a ${body.byteLength}-byte data section`);
    entries.push([name, value]);
  }
  // The format requires the byte ranges to tile the data section without overlap.
  const ranges = entries.map(([name, e]) => ({ name, begin: e.data_offsets[0], end: e.data_offsets[1] })).sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < ranges.length; i++)
    if (ranges[i]!.begin < ranges[i - 1]!.end)
      throw new WeightsError('malformed', `safetensors: tensors ${ranges[i - 1]!.name} and ${ranges[i]!.name} overlap`);
  const tensors = new Map<string, NamedTensor>();
  for (const [name, e] of entries) tensors.set(name, { shape: e.shape, data: toFloat32(body, e) });
  return { tensors, metadata };
}

function toFloat32(body: Uint8Array, e: HeaderEntry): Float32Array {
  const [begin, end] = e.data_offsets;
  const raw = new DataView(body.buffer, body.byteOffset + begin, end - begin);
  const n = (end - begin) / DTYPE_BYTES[e.dtype]!;
  const out = new Float32Array(n);
  if (e.dtype === 'F32' && LITTLE_ENDIAN)
    out.set(new Float32Array(new Uint8Array(body.subarray(begin, end)).buffer)); // a copy, aligned (a Node Buffer's slice is a view)
  else if (e.dtype === 'F32') for (let i = 0; i < n; i++) out[i] = raw.getFloat32(i * 4, true);
  else if (e.dtype === 'F64') for (let i = 0; i < n; i++) out[i] = raw.getFloat64(i * 8, true);
  else if (e.dtype === 'BF16') {
    const bits = new Uint32Array(1);
    const asFloat = new Float32Array(bits.buffer);
    for (let i = 0; i < n; i++) {
      bits[0] = raw.getUint16(i * 2, true) << 16;
      out[i] = asFloat[0]!;
    }
  } else for (let i = 0; i < n; i++) out[i] = halfToFloat(raw.getUint16(i * 2, true));
  return out;
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/** Writes tensors (in the map's order) as F32 safetensors, with string metadata. */
export function writeSafetensors(tensors: Map<string, NamedTensor>, metadata: Record<string, string> = {}): Uint8Array<ArrayBuffer> {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, t] of tensors) {
    const count = t.shape.reduce((a, b) => a * b, 1);
    if (count !== t.data.length)
      throw new WeightsError('shape', `safetensors: tensor ${name} has ${t.data.length} values for shape [${t.shape}]`);
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + count * 4] };
    offset += count * 4;
  }
  let json = new TextEncoder().encode(JSON.stringify(header));
  // Padded with spaces so the data section starts 8-byte aligned, as the reference writer does.
  const padded = Math.ceil(json.length / 8) * 8;
  if (padded !== json.length) json = new TextEncoder().encode(JSON.stringify(header) + ' '.repeat(padded - json.length));
  const out = new Uint8Array(8 + padded + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(padded), true);
  out.set(json, 8);
  let at = 8 + padded;
  for (const t of tensors.values()) {
    if (LITTLE_ENDIAN) out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), at);
    else for (let i = 0; i < t.data.length; i++) view.setFloat32(at + i * 4, t.data[i]!, true);
    at += t.data.length * 4;
  }
  return out;
}
