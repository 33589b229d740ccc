// Writing tar archives as a stream of blocks: ustar headers, with a pax 'x' record for names over
// 100 bytes. The reader in tar.ts reads all of it back, and so do GNU tar and Python's tarfile.
import { unsafeNameReason } from './tar.ts';

const BLOCK = 512;
const encoder = new TextEncoder();

function header(name: string, size: number, type: '0' | 'x', mtime: number): Uint8Array {
  const block = new Uint8Array(BLOCK);
  const put = (text: string, offset: number, length: number) => block.set(encoder.encode(text).subarray(0, length), offset);
  const octal = (value: number, length: number) => value.toString(8).padStart(length - 1, '0');
  put(name, 0, 100);
  put(octal(0o644, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(mtime, 12), 136, 12);
  put(type, 156, 1);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  block.fill(0x20, 148, 156); // the checksum counts its own field as spaces
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += block[i]!;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return block;
}

/** A pax record "<len> path=<name>\n", whose length counts its own digits. */
function paxRecord(key: string, value: string): Uint8Array {
  const body = ` ${key}=${value}\n`;
  const bodyLength = encoder.encode(body).length;
  let length = bodyLength + 1;
  while (String(length).length + bodyLength !== length) length = String(length).length + bodyLength;
  return encoder.encode(`${length}${body}`);
}

const zeros = new Uint8Array(BLOCK * 2);
const paddingOf = (size: number) => (BLOCK - (size % BLOCK)) % BLOCK;

/** Bytes one member takes in the archive (header, long-name record, data, padding). */
export function tarMemberBytes(name: string, size: number): number {
  const nameLength = encoder.encode(name).length;
  const pax = nameLength > 100 ? BLOCK + paxRecord('path', name).length + paddingOf(paxRecord('path', name).length) : 0;
  return pax + BLOCK + size + paddingOf(size);
}
/** The end-of-archive marker's size. */
export const TAR_END_BYTES = BLOCK * 2;

export type ChunkSink = (chunk: Uint8Array) => Promise<void> | void;

/** Writes members to a sink one at a time; nothing is buffered beyond the current header. */
export class TarWriter {
  bytesWritten = 0;
  constructor(
    private readonly sink: ChunkSink,
    private readonly mtime = 0,
  ) {}

  private async emit(chunk: Uint8Array): Promise<void> {
    if (chunk.length === 0) return;
    this.bytesWritten += chunk.length;
    await this.sink(chunk);
  }

  async add(name: string, data: Uint8Array): Promise<void> {
    const unsafe = unsafeNameReason(name);
    if (unsafe) throw new RangeError(`tar member "${name}": ${unsafe}`);
    if (encoder.encode(name).length > 100) {
      const record = paxRecord('path', name);
      await this.emit(header('././@PaxHeader', record.length, 'x', this.mtime));
      await this.emit(record);
      await this.emit(zeros.subarray(0, paddingOf(record.length)));
    }
    await this.emit(header(name, data.length, '0', this.mtime));
    await this.emit(data);
    await this.emit(zeros.subarray(0, paddingOf(data.length)));
  }

  /** The two zero blocks that end an archive. */
  async end(): Promise<void> {
    await this.emit(zeros);
  }
}
