// Streamed video decoding: a long file read a window at a time must give exactly what decoding the
// whole file gives, never read more than a window at once, and turn a failing or stalled source
// into a typed error for that item while the pool goes on.
import {
  DecodeError,
  fileByteSource,
  memoryByteSource,
  type ByteSource,
  type DecodePool,
  type VideoDecodeOptions,
} from '../../src/decode/index.ts';
import { httpByteSource } from '../../src/sources/index.ts';
import { check, rejectsWith } from './assert.ts';

export const LONG_VIDEOS = ['long.h264.mp4', 'long.vp9.webm'] as const;
const WINDOW = 64 * 1024;
const OPTIONS: VideoDecodeOptions = { width: 64, height: 48, frames: { times: [0.5, 17.25, 33, 58.9] } };
const CLIP_BYTES = 4 * 64 * 48 * 3;

/**
 * How the 127.0.0.1 fixture servers of the streaming tests answer: HEAD with the length, a single
 * `bytes=a-b` range with 206 (416 past the end), anything else with the whole file.
 */
export function answerRange(
  bytes: Uint8Array,
  method: string,
  range: string | null | undefined,
): { status: number; headers: Record<string, string>; body?: Uint8Array } {
  const match = /^bytes=(\d+)-(\d+)$/.exec(range ?? '');
  if (method === 'HEAD' || !match)
    return {
      status: 200,
      headers: { 'content-length': String(bytes.length), 'accept-ranges': 'bytes' },
      ...(method === 'HEAD' ? {} : { body: bytes }),
    };
  const start = Number(match[1]);
  const end = Math.min(Number(match[2]), bytes.length - 1);
  if (start >= bytes.length) return { status: 416, headers: {} };
  return {
    status: 206,
    headers: { 'content-range': `bytes ${start}-${end}/${bytes.length}`, 'content-length': String(end - start + 1) },
    body: bytes.subarray(start, end + 1),
  };
}

/**
 * The fixture servers' handler (for a Serve of sources-scenarios.ts): the request's path names the
 * fixture, `read` gives its bytes (404 when it cannot), answerRange answers.
 */
export function rangeHandler(
  read: (name: string) => Promise<Uint8Array>,
  /** Told the size of each body sent (the bytes a client was served). */
  sent?: (bytes: number) => void,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const bytes = await read(new URL(request.url).pathname.slice(1)).catch(() => undefined);
    if (!bytes) return new Response(null, { status: 404 });
    const answer = answerRange(bytes, request.method, request.headers.get('range'));
    sent?.(answer.body?.length ?? 0);
    return new Response(answer.body ? new Blob([answer.body as Uint8Array<ArrayBuffer>]) : null, {
      status: answer.status,
      headers: answer.headers,
    });
  };
}

/** Wraps a source to count its reads. */
export function countingSource(inner: ByteSource): ByteSource & { reads: number; bytes: number; largest: number } {
  const counted = {
    size: inner.size,
    reads: 0,
    bytes: 0,
    largest: 0,
    async read(offset: number, length: number) {
      const out = await inner.read(offset, length);
      counted.reads++;
      counted.bytes += out.length;
      counted.largest = Math.max(counted.largest, length);
      return out;
    },
  };
  return counted;
}

async function withClip<T>(pool: DecodePool, body: (ptr: number, view: () => Uint8Array) => Promise<T>): Promise<T> {
  const ptr = pool.malloc(CLIP_BYTES);
  try {
    return await body(ptr, () => new Uint8Array(pool.memory.buffer, ptr, CLIP_BYTES));
  } finally {
    pool.free(ptr);
  }
}

/** `source` streams `whole` (the same file): same pixels and timestamps, windows of 64 KiB. */
export async function streamedMatchesWhole(
  pool: DecodePool,
  name: string,
  whole: Uint8Array,
  source: ByteSource,
): Promise<{ reads: number; bytes: number }> {
  check(whole.length > 8 * WINDOW, `${name}: the fixture (${whole.length} bytes) should be far larger than a window`);
  const reference = await withClip(pool, async (ptr, view) => {
    const info = await pool.decodeVideo(whole, ptr, OPTIONS);
    return { info, pixels: view().slice() };
  });
  check(reference.info.framesWritten === 4, `${name}: whole-file decode wrote ${reference.info.framesWritten} frames`);
  const counted = countingSource(source);
  await withClip(pool, async (ptr, view) => {
    const info = await pool.decodeVideoStream(counted, ptr, { ...OPTIONS, windowBytes: WINDOW });
    check(info.framesWritten === 4, `${name}: streamed decode wrote ${info.framesWritten} frames`);
    for (let i = 0; i < 4; i++)
      check(
        info.timestamps[i] === reference.info.timestamps[i],
        `${name}: frame ${i} at ${info.timestamps[i]} s, whole file gave ${reference.info.timestamps[i]} s`,
      );
    const pixels = view();
    for (let i = 0; i < CLIP_BYTES; i++)
      check(pixels[i] === reference.pixels[i], `${name}: streamed pixel byte ${i} differs from the whole-file decode`);
  });
  check(counted.largest <= WINDOW, `${name}: a read asked for ${counted.largest} bytes, over the ${WINDOW}-byte window`);
  return { reads: counted.reads, bytes: counted.bytes };
}

/** A source that fails, and one that stalls, fail their item with a DecodeError; the pool goes on. */
export async function failingSourcesFailTheirItem(pool: DecodePool, whole: Uint8Array): Promise<void> {
  let calls = 0;
  const failing: ByteSource = {
    size: whole.length,
    read: async (offset, length) => {
      if (++calls > 3) throw new Error('connection reset (injected)');
      return whole.subarray(offset, offset + length);
    },
  };
  const stalled: ByteSource = { size: whole.length, read: () => new Promise<Uint8Array>(() => {}) };
  await withClip(pool, async (ptr) => {
    await rejectsWith(
      pool.decodeVideoStream(failing, ptr, { ...OPTIONS, windowBytes: WINDOW }),
      (e) => e instanceof DecodeError && e.code === 'corrupt' && /connection reset/.test(e.message),
      'a failing source',
    );
    await rejectsWith(
      pool.decodeVideoStream(stalled, ptr, { ...OPTIONS, windowBytes: WINDOW, readTimeoutMs: 300 }),
      (e) => e instanceof DecodeError && /longer than 300 ms/.test(e.message),
      'a stalled source',
    );
    const info = await pool.decodeVideo(whole, ptr, OPTIONS);
    check(info.framesWritten === 4, 'the pool decodes normally after failed streams');
  });
}

/**
 * A stream of unknown size whose MP4 `ftyp` box claims 1.7 GB (found by fuzz-stream): with no
 * total size to check it against, libavformat sizes a buffer from the claim. The job must fail
 * with a typed error without growing the pool's memory by anything like the claim, and the pool
 * must go on decoding.
 */
export async function forgedBoxInStreamOfUnknownSize(pool: DecodePool, whole: Uint8Array): Promise<void> {
  const forged = new Uint8Array(64 + whole.length);
  forged.set([0x66, 0x4c, 0x61, 0x43], 0); // box size 0x664c6143 (about 1.7 GB)
  forged.set(new TextEncoder().encode('ftypisom\0\0\x02\0isomiso2avc1mp41'), 4);
  forged.set(whole, 64);
  const unsized: ByteSource = { read: async (offset, length) => forged.subarray(offset, offset + length) };
  const before = pool.memory.buffer.byteLength;
  await withClip(pool, async (ptr) => {
    await rejectsWith(
      pool.decodeVideoStream(unsized, ptr, { ...OPTIONS, windowBytes: WINDOW }),
      (e) => e instanceof DecodeError && e.code === 'out-of-memory' && /larger than the pixel limit allows/.test(e.message),
      'a forged box size in a stream of unknown size',
    );
    const grown = pool.memory.buffer.byteLength - before;
    check(grown < 256 * 2 ** 20, `the pool's memory grew by ${(grown / 2 ** 20).toFixed(0)} MiB for a forged box`);
    const info = await pool.decodeVideo(whole, ptr, OPTIONS);
    check(info.framesWritten === 4, 'the pool decodes normally after the forged stream');
  });
}

/**
 * The file `name` (bytes `whole`) streamed from memory, from the local file at `path` and over HTTP
 * ranges from `url`: each gives the whole file's frames, and over HTTP seeking skips most of the file.
 */
export async function everySourceMatchesWhole(pool: DecodePool, name: string, whole: Uint8Array, path: string, url: string): Promise<void> {
  await streamedMatchesWhole(pool, name, whole, memoryByteSource(whole));
  const file = await fileByteSource(path);
  try {
    await streamedMatchesWhole(pool, name, whole, file);
  } finally {
    await file.close();
  }
  const traffic = await streamedMatchesWhole(pool, name, whole, await httpByteSource(url));
  check(traffic.bytes < whole.length, `read ${traffic.bytes} bytes of ${whole.length}: seeking should skip most`);
}
