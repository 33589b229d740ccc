// Streamed input for video jobs: the pool thread asks for bytes by offset through a td_stream
// record in shared memory and blocks; the event loop answers from a ByteSource, one window at a
// time. Only the window is ever in wasm memory, so a long file is never held whole.
import { STREAM_WORDS, StreamField, StreamState } from './abi.ts';
import { DecodeError } from './errors.ts';
import { openFileRange } from '../runtime/index.ts';

/**
 * Random access to the bytes of one file: local (fileByteSource), in memory (memoryByteSource) or
 * remote (httpByteSource in the sources room: HTTP ranges with its retries and timeouts).
 */
export interface ByteSource {
  /** Total size in bytes when known; MP4 files with their index at the end need it to seek there. */
  readonly size?: number;
  /** Up to `length` bytes from `offset`: fewer only at the end of the data, none past it. */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** A ByteSource over bytes already in memory (tests, or data that arrived whole anyway). */
export function memoryByteSource(bytes: Uint8Array): ByteSource {
  return { size: bytes.length, read: (offset, length) => Promise.resolve(bytes.subarray(offset, Math.min(bytes.length, offset + length))) };
}

/**
 * Answers a streamed job's requests until its record says CLOSED. Never throws: a failing source
 * is reported to C as `got_len < 0` (the job then fails) and kept for the caller in `failure`.
 */
export class StreamServer {
  failure: unknown;
  /** A read that takes longer fails the job instead of holding its pool thread (default 30 s). */
  readTimeoutMs = 30_000;
  #served = 0;
  #largestRead = 0;

  constructor(
    readonly source: ByteSource,
    private readonly memory: () => ArrayBufferLike,
    private readonly record: number,
  ) {}

  /** Bytes delivered so far and the largest single window. */
  get traffic(): { bytes: number; largestRead: number } {
    return { bytes: this.#served, largestRead: this.#largestRead };
  }

  async serve(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const words = new Int32Array(this.memory(), this.record, STREAM_WORDS);
      const state = Atomics.load(words, StreamField.State);
      if (state === StreamState.Closed) return;
      if (state === StreamState.Want) {
        await this.#answer(words, signal);
        continue;
      }
      const waited = Atomics.waitAsync(words, StreamField.State, state);
      if (waited.async) await waited.value;
    }
  }

  /** Ends serve() when the job ended without closing its stream (cancelled before it ran). */
  close(): void {
    const words = new Int32Array(this.memory(), this.record, STREAM_WORDS);
    Atomics.store(words, StreamField.State, StreamState.Closed);
    Atomics.notify(words, StreamField.State);
  }

  async #answer(words: Int32Array, signal?: AbortSignal): Promise<void> {
    const offset = (words[StreamField.WantLo]! >>> 0) + words[StreamField.WantHi]! * 2 ** 32;
    const length = Math.min(words[StreamField.WantLen]!, words[StreamField.Capacity]!);
    let got = -1;
    try {
      signal?.throwIfAborted();
      const bytes = await withTimeout(this.source.read(offset, length), this.readTimeoutMs, `a read of ${length} bytes at ${offset}`);
      if (bytes.length > length) throw new RangeError(`byte source returned ${bytes.length} bytes for a read of ${length}`);
      const view = new Int32Array(this.memory(), this.record, STREAM_WORDS);
      new Uint8Array(this.memory(), view[StreamField.Buffer]!, bytes.length).set(bytes);
      got = bytes.length;
      this.#served += got;
      this.#largestRead = Math.max(this.#largestRead, got);
    } catch (error) {
      this.failure ??= error;
    }
    const view = new Int32Array(this.memory(), this.record, STREAM_WORDS);
    view[StreamField.GotLen] = got;
    Atomics.store(view, StreamField.State, StreamState.Filled);
    Atomics.notify(view, StreamField.State);
  }
}

/** Writes a fresh td_stream record at `record` with its window at `buffer`. */
export function initStreamRecord(
  memory: ArrayBufferLike,
  record: number,
  buffer: number,
  capacity: number,
  size: number | undefined,
): void {
  const w = new Int32Array(memory, record, STREAM_WORDS);
  w.fill(0);
  w[StreamField.Buffer] = buffer;
  w[StreamField.Capacity] = capacity;
  if (size === undefined || !(size >= 0)) {
    w[StreamField.SizeLo] = -1;
    w[StreamField.SizeHi] = -1;
  } else {
    w[StreamField.SizeLo] = (size % 2 ** 32) | 0;
    w[StreamField.SizeHi] = Math.floor(size / 2 ** 32);
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DecodeError('over-budget', `${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** A ByteSource over a local file (Node and Deno); close it when done. */
export async function fileByteSource(path: string): Promise<ByteSource & { close(): Promise<void> }> {
  return openFileRange(path);
}
