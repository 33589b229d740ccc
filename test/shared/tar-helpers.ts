// Test helpers for tar shards: a small ustar writer (with GNU long names) that can also write the
// hostile members a real writer would refuse, and a stream that hands bytes over in small chunks.

export interface TarEntry {
  name: string;
  data?: Uint8Array | string;
  /** Tar typeflag: '0' file (default), '5' directory, '2' symlink ... */
  type?: string;
}

const encoder = new TextEncoder();

function header(name: string, size: number, type: string): Uint8Array {
  const block = new Uint8Array(512);
  const put = (text: string, offset: number, length: number) => block.set(encoder.encode(text).subarray(0, length), offset);
  const octal = (value: number, length: number) => value.toString(8).padStart(length - 1, '0');
  put(name, 0, 100);
  put(octal(0o644, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(0, 12), 136, 12);
  put(type, 156, 1);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  block.fill(0x20, 148, 156); // the checksum counts its own field as spaces
  const sum = block.reduce((a, b) => a + b, 0);
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return block;
}

function padded(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(data.length / 512) * 512);
  out.set(data);
  return out;
}

/** Builds a tar archive in memory; names over 100 bytes get a GNU '././@LongLink' record first. */
export function writeTar(entries: TarEntry[], options: { endBlocks?: boolean } = {}): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const entry of entries) {
    const data = typeof entry.data === 'string' ? encoder.encode(entry.data) : (entry.data ?? new Uint8Array(0));
    const type = entry.type ?? '0';
    const nameBytes = encoder.encode(entry.name);
    if (nameBytes.length > 100) {
      const longName = new Uint8Array(nameBytes.length + 1);
      longName.set(nameBytes);
      parts.push(header('././@LongLink', longName.length, 'L'), padded(longName));
    }
    parts.push(header(entry.name, type === '0' ? data.length : 0, type));
    if (type === '0') parts.push(padded(data));
  }
  if (options.endBlocks ?? true) parts.push(new Uint8Array(1024));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** A stream over bytes in chunks of chunkSize (odd sizes exercise the reader's reassembly). */
export function streamOf(bytes: Uint8Array, chunkSize = 4096, onCancel?: () => void): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + chunkSize));
      offset += chunkSize;
    },
    cancel() {
      onCancel?.();
    },
  });
}

export const bytesEqual = (a: Uint8Array | undefined, b: Uint8Array | undefined) =>
  a !== undefined && b !== undefined && a.length === b.length && a.every((v, i) => v === b[i]);

/** Deterministic pseudo-random bytes for payloads. */
export function payload(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed * 2654435761 + 1;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}
