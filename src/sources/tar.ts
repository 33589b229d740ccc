// A streaming tar reader: ustar, GNU long names ('L') and pax path records ('x'), which covers the
// shards WebDataset tools write. It pulls from a ReadableStream and holds at most one member's bytes,
// so a multi-gigabyte shard read over fetch() never sits in memory.

import { TandemError } from '../errors/index.ts';

const BLOCK = 512;
const TRAILER_LIMIT = 64 * 1024;

export type SourceErrorReason =
  | 'unsafe-name'
  | 'too-large'
  | 'unsupported-type'
  | 'duplicate'
  | 'truncated'
  | 'corrupt'
  | 'bad-header'
  | 'bad-token';

/**
 * A problem with one sample (or, for 'truncated'/'corrupt', with the rest of a shard). Yielded as a
 * value rather than thrown where it concerns one sample, so that a pipeline can count it as that
 * sample's failure and carry on with the next one.
 */
export class SourceError extends TandemError {
  override readonly name = 'SourceError';
  constructor(
    readonly code: SourceErrorReason,
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}

export interface TarMember {
  /** The member's path as stored (long names already resolved). */
  name: string;
  type: 'file' | 'directory' | 'other';
  size: number;
  /** The member's bytes; absent for non-files and for members that carry an error. */
  data?: Uint8Array;
  /** Set when this member must not be used: unsafe name, over maxMemberBytes, or not a plain file. */
  error?: SourceError;
}

export interface TarReadOptions {
  /** Members larger than this are skipped unread and reported with a 'too-large' error. */
  maxMemberBytes?: number;
}

/** Pulls exact byte counts out of a stream of arbitrarily sized chunks. */
export class ByteReader {
  private chunk: Uint8Array = new Uint8Array(0);
  private offset = 0;
  done = false;
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  private async fill(): Promise<boolean> {
    while (this.offset >= this.chunk.length) {
      if (this.done) return false;
      const { value, done } = await this.reader.read();
      if (done) {
        this.done = true;
        return false;
      }
      this.chunk = value;
      this.offset = 0;
    }
    return true;
  }

  /** Exactly n bytes, or fewer only if the stream ended first (the caller decides if that is an error). */
  async read(n: number): Promise<Uint8Array> {
    const out = new Uint8Array(n);
    const filled = await this.readInto(out);
    return filled === n ? out : out.subarray(0, filled);
  }

  /** Fills `target` (a caller's reused buffer); returns how many bytes came before the stream ended. */
  async readInto(target: Uint8Array): Promise<number> {
    let filled = 0;
    while (filled < target.length && (await this.fill())) {
      const take = Math.min(target.length - filled, this.chunk.length - this.offset);
      target.set(this.chunk.subarray(this.offset, this.offset + take), filled);
      this.offset += take;
      filled += take;
    }
    return filled;
  }

  /** Discards n bytes without keeping them; returns how many were actually there. */
  async skip(n: number): Promise<number> {
    let skipped = 0;
    while (skipped < n && (await this.fill())) {
      const take = Math.min(n - skipped, this.chunk.length - this.offset);
      this.offset += take;
      skipped += take;
    }
    return skipped;
  }
}

const decoder = new TextDecoder();

function text(block: Uint8Array, start: number, length: number): string {
  const field = block.subarray(start, start + length);
  const end = field.indexOf(0);
  return decoder.decode(end < 0 ? field : field.subarray(0, end));
}

function octal(block: Uint8Array, start: number, length: number): number {
  // GNU tar stores sizes ≥ 8 GiB in base-256, flagged by the high bit of the first byte.
  if (((block[start] ?? 0) & 0x80) !== 0) {
    let value = (block[start] ?? 0) & 0x7f;
    for (let i = 1; i < length; i++) value = value * 256 + (block[start + i] ?? 0);
    return value;
  }
  const digits = text(block, start, length).trim();
  return digits === '' ? 0 : Number.parseInt(digits, 8);
}

function checksumOk(block: Uint8Array): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (block[i] ?? 0);
  return sum === octal(block, 148, 8);
}

/** Pax extended header records: "<len> key=value\n" ...; only the path matters here. */
function paxPath(data: Uint8Array): string | undefined {
  let path: string | undefined;
  for (const record of decoder.decode(data).split('\n')) {
    const match = /^\d+ path=(.*)$/s.exec(record);
    if (match) path = match[1];
  }
  return path;
}

/**
 * Why a member's name is unsafe to use, or undefined when it is fine. A tar written by an attacker
 * can name members "../../etc/x" or "/etc/x"; whoever later writes samples to disk by name must
 * never see those, so they are refused here, at the source.
 */
export function unsafeNameReason(name: string): string | undefined {
  if (name === '') return 'empty name';
  if (name.includes('\0')) return 'NUL in name';
  if (name.startsWith('/') || name.startsWith('\\') || /^[A-Za-z]:/.test(name)) return 'absolute path';
  if (name.split(/[\\/]/).includes('..')) return 'parent directory reference';
  return undefined;
}

const padding = (size: number) => (BLOCK - (size % BLOCK)) % BLOCK;

/**
 * Yields the members of a tar stream in order. Per-member problems come back as `member.error`;
 * a stream that ends mid-member or has a corrupt header throws a SourceError ('truncated' or
 * 'corrupt'), since nothing after that point can be trusted. Stopping early cancels the stream.
 */
export function readTar(stream: ReadableStream<Uint8Array>, options: TarReadOptions = {}): AsyncGenerator<TarMember> {
  return readTarTracked(stream, options, {});
}

/**
 * readTar that also sets `reading.member` to the member whose header has been read while its data
 * is being read, so a caller whose read fails knows where it was (webDatasetSamples).
 */
export async function* readTarTracked(
  stream: ReadableStream<Uint8Array>,
  options: TarReadOptions,
  reading: { member?: string },
): AsyncGenerator<TarMember> {
  const maxMemberBytes = options.maxMemberBytes ?? Number.POSITIVE_INFINITY;
  const reader = stream.getReader();
  const bytes = new ByteReader(reader);
  let longName: string | undefined;
  let lastName = '(start of shard)';
  try {
    for (;;) {
      const header = await bytes.read(BLOCK);
      // A stream that ends on a block boundary without the end-of-archive blocks is accepted:
      // several writers omit them, and every member before was complete.
      if (header.length === 0) return;
      if (header.length < BLOCK) throw new SourceError('truncated', lastName, `tar truncated inside the header after ${lastName}`);
      if (header.every((b) => b === 0)) {
        // End-of-archive marker. Read on through the record padding (GNU tar pads to 10 KiB) so the
        // stream ends by itself: a cache writing the shard as it streams commits only complete reads.
        await bytes.skip(TRAILER_LIMIT);
        return;
      }
      if (!checksumOk(header)) throw new SourceError('corrupt', lastName, `tar header checksum mismatch after ${lastName}`);

      const flag = String.fromCharCode(header[156] ?? 0);
      const size = octal(header, 124, 12);
      const prefix = text(header, 345, 155);
      const ustar = text(header, 257, 6).startsWith('ustar');
      const stored = ustar && prefix !== '' ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100);
      const name = longName ?? stored;

      if (flag === 'L' || flag === 'x') {
        // Meta members naming the next one: small by nature, so a huge one is corruption.
        if (size > 1 << 20) throw new SourceError('corrupt', lastName, `tar long-name record of ${size} bytes after ${lastName}`);
        const data = await bytes.read(size + padding(size));
        if (data.length < size + padding(size))
          throw new SourceError('truncated', lastName, `tar truncated inside a long-name record after ${lastName}`);
        longName = flag === 'L' ? text(data, 0, size) : (paxPath(data.subarray(0, size)) ?? longName);
        continue;
      }
      longName = undefined;
      lastName = name;
      reading.member = name;

      const type = flag === '0' || flag === '\0' || flag === '7' ? 'file' : flag === '5' ? 'directory' : 'other';
      const unsafe = unsafeNameReason(name);
      let error: SourceError | undefined;
      if (unsafe !== undefined) error = new SourceError('unsafe-name', name, `tar member "${name}" refused: ${unsafe}`);
      else if (type === 'other')
        error = new SourceError('unsupported-type', name, `tar member "${name}" has type '${flag}' (only files and directories are read)`);
      else if (size > maxMemberBytes)
        error = new SourceError('too-large', name, `tar member "${name}" is ${size} bytes, over maxMemberBytes ${maxMemberBytes}`);

      let data: Uint8Array | undefined;
      if (error === undefined && type === 'file') {
        data = await bytes.read(size);
        if (data.length < size)
          throw new SourceError('truncated', name, `tar truncated: member "${name}" has ${data.length} of ${size} bytes`);
        if ((await bytes.skip(padding(size))) < padding(size))
          throw new SourceError('truncated', name, `tar truncated in the padding of "${name}"`);
      } else if ((await bytes.skip(size + padding(size))) < size + padding(size)) {
        throw new SourceError('truncated', name, `tar truncated: skipped member "${name}" is incomplete`);
      }
      reading.member = undefined;
      yield error ? { name, type, size, error } : data ? { name, type, size, data } : { name, type, size };
    }
  } finally {
    // Early exit (break, a thrown error, a pipeline stopping) must not leave a fetch body open.
    if (!bytes.done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
