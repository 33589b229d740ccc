// Runtime-neutral robustness bodies: inputs that once hung the decoder, the per-job time limit,
// and a seeded mutational fuzz pass over every fixture kind. Each throws on failure.
import { DecodeError, type DecodePool } from '../../src/decode/index.ts';
import { Rng } from '../../src/random/index.ts';
import { encodeJpeg, encodePng, solidPatches } from '../../src/synthetic/index.ts';
import { check, rejectsWith, within } from './assert.ts';
import { forgeFlacStreamInfo, forgeH264Size, forgeVp9Size } from './forge-media.ts';
import { sineWav, type FixtureLoader } from './media-scenarios.ts';

/** Repository-relative to the generated fixtures folder each runtime's loader reads from. */
export const REGRESS = '../regress/';
export const HANGING_VIDEOS = ['video-hang-1.webm', 'video-hang-2.mkv'] as const;

const CLIP = { width: 48, height: 48, frames: { fps: 5, count: 4 } } as const;
const CLIP_BYTES = 4 * 48 * 48 * 3;

async function withBuffer<T>(pool: DecodePool, bytes: number, body: (ptr: number) => Promise<T>): Promise<T> {
  const ptr = pool.malloc(bytes);
  try {
    return await body(ptr);
  } finally {
    pool.free(ptr);
  }
}

/** The outcome of one decode: 'ok' or the DecodeError code; anything else is a bug. */
async function outcome(what: string, run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return 'ok';
  } catch (error) {
    check(error instanceof DecodeError, `${what}: not a DecodeError: ${String(error)}`);
    return error.code;
  }
}

/**
 * The two mutated videos that used to keep a pool thread forever end on their own (not through
 * the time limit) with a result or a typed error, both at once on a two-thread pool, and the pool
 * decodes a good video afterwards.
 */
export async function hangingVideosEnd(pool: DecodePool, load: FixtureLoader): Promise<string[]> {
  const files = await Promise.all(HANGING_VIDEOS.map((name) => load(REGRESS + name)));
  const codes = await Promise.all(
    files.map((bytes, i) =>
      withBuffer(pool, CLIP_BYTES, (ptr) =>
        outcome(HANGING_VIDEOS[i] ?? '', () => pool.decodeVideo(bytes, ptr, { ...CLIP, timeLimitMs: 30_000 })),
      ),
    ),
  );
  codes.forEach((code, i) => {
    check(code !== 'over-budget', `${HANGING_VIDEOS[i]} only ended at its time limit`);
  });
  await withBuffer(pool, CLIP_BYTES, async (ptr) => {
    const good = await pool.decodeVideo(await load('testsrc.vp9.webm'), ptr, CLIP);
    check(good.framesWritten === 4, `a good video after the hanging ones wrote ${good.framesWritten} of 4 frames`);
  });
  check(pool.stats().stuckThreads === 0, 'a pool thread is still held');
  return codes;
}

/**
 * The call that used to hang (test/fixtures/regress/README.md), as reported: a one-thread pool and
 * the default time limit. Each file rejects with a DecodeError of its own (not the time limit, not
 * a stalled pool) within a few seconds, and the same thread then decodes a good video to the same
 * pixels and times it gave before them. Returns the codes.
 */
export async function hangingVideosFailAloneOnOneThread(pool: DecodePool, load: FixtureLoader): Promise<string[]> {
  check(pool.stats().threads === 1, `the pool has ${pool.stats().threads} threads, not 1`);
  const good = await load('testsrc.vp9.webm');
  const files = await Promise.all(HANGING_VIDEOS.map((name) => load(REGRESS + name)));
  const target = pool.allocate(CLIP_BYTES);
  try {
    const before = await pool.decodeVideo(good, target, CLIP);
    check(before.framesWritten === 4, `the good video wrote ${before.framesWritten} of 4 frames`);
    const pixels = target.bytes.slice();
    const codes: string[] = [];
    for (const [i, bytes] of files.entries()) {
      const name = HANGING_VIDEOS[i] ?? '';
      const error = await within(
        rejectsWith(pool.decodeVideo(bytes, target, CLIP), (e) => e instanceof DecodeError, `${name} on one thread`),
        10_000,
        `${name} on one thread`,
      );
      const code = (error as DecodeError).code;
      check(code !== 'over-budget' && code !== 'stalled', `${name} failed as ${code}: it ran into its time limit`);
      codes.push(code);
    }
    const after = await pool.decodeVideo(good, target, CLIP);
    check(after.framesWritten === 4, `the good video after the hanging ones wrote ${after.framesWritten} of 4 frames`);
    check(String(after.timestamps) === String(before.timestamps), "the good video's frame times changed after the hanging ones");
    check(
      target.bytes.every((v, k) => v === pixels[k]),
      'the good video decodes to other pixels after the hanging ones',
    );
    check(pool.stats().stuckThreads === 0, 'the pool thread is still held');
    return codes;
  } finally {
    target.free();
  }
}

/** A job over its time limit fails as 'over-budget' for that item only; the pool goes on. */
export async function timeLimitFailsTheItem(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const video = await load('long.h264.mp4');
  await withBuffer(pool, CLIP_BYTES * 8, async (ptr) => {
    const code = await outcome('time-limited video', () =>
      pool.decodeVideo(video, ptr, { width: 48, height: 48, frames: { fps: 30, count: 32 }, timeLimitMs: 1 }),
    );
    check(code === 'over-budget', `a 1 ms limit gave ${code}, not over-budget`);
    const audio = sineWav({ sampleRate: 48000, seconds: 20, channels: 2 });
    const audioCode = await outcome('time-limited audio', () =>
      pool.decodeAudio(audio, ptr, { sampleRate: 16000, channels: 1, maxFrames: 4096, timeLimitMs: 1 }),
    );
    // Either outcome is right here: the budget is checked between packets, and 4096 output frames
    // of a WAV may be written within the first millisecond on a fast machine. What must not
    // happen is any other code, or a held thread (checked below).
    check(audioCode === 'over-budget' || audioCode === 'ok', `a 1 ms audio limit gave ${audioCode}`);
    const ok = await pool.decodeVideo(video, ptr, { width: 48, height: 48, frames: { indices: [0, 5] } });
    check(ok.framesWritten === 2, 'the pool decodes normally after an over-budget job');
  });
  check(pool.stats().stuckThreads === 0, 'an over-budget job left its thread held');
}

type Kind = 'image' | 'audio' | 'video';

/** One seeded mutation: bit flips, overwritten runs, a cut, a duplicated or deleted span. */
export function mutate(bytes: Uint8Array, rng: Rng): Uint8Array {
  let out = bytes.slice();
  const edits = 1 + (rng.next() % 4);
  for (let e = 0; e < edits && out.length > 0; e++) {
    const at = rng.next() % out.length;
    switch (rng.next() % 6) {
      case 0:
        out[at] = (out[at] ?? 0) ^ (1 << (rng.next() % 8));
        break;
      case 1:
        out[at] = rng.next() & 255;
        break;
      case 2:
        for (let i = at; i < Math.min(out.length, at + 1 + (rng.next() % 16)); i++)
          out[i] = [0, 255, rng.next() & 255][rng.next() % 3] ?? 0;
        break;
      case 3:
        out = out.slice(0, at);
        break;
      case 4: {
        const n = 1 + (rng.next() % 256);
        const copy = new Uint8Array(out.length + n);
        copy.set(out.subarray(0, at));
        copy.set(out.subarray(at, at + n), at);
        copy.set(out.subarray(at), at + Math.min(n, out.length - at));
        out = copy.subarray(0, out.length + Math.min(n, out.length - at));
        break;
      }
      default: {
        const n = 1 + (rng.next() % 64);
        out = new Uint8Array([...out.subarray(0, at), ...out.subarray(at + n)]);
      }
    }
  }
  return out;
}

export interface FuzzSummary {
  cases: number;
  outcomes: Record<string, number>;
}

/**
 * `perSeed` seeded mutations of each fixture kind (JPEG, PNG, WebP, GIF; WAV, MP3, AAC, FLAC,
 * Opus; H.264 MP4/MKV, VP9 WebM), `parallel` at a time: every case ends with a result or a
 * DecodeError, none runs into its time limit, and the pool decodes a good input afterwards.
 */
export async function mutationalFuzzPass(
  pool: DecodePool,
  load: FixtureLoader,
  options: { seed: number; perSeed: number; parallel?: number },
): Promise<FuzzSummary> {
  const pattern = solidPatches(64, 48, 3, 7);
  const seeds: Array<[string, Kind, Uint8Array]> = [
    ['pattern.jpg', 'image', encodeJpeg(pattern.rgb, 64, 48, { quality: 90 })],
    ['pattern.png', 'image', encodePng(pattern.rgb, 64, 48)],
    ['sine.wav', 'audio', sineWav({ sampleRate: 8000, seconds: 0.25 })],
  ];
  const files: Array<[string, Kind]> = [
    ['progressive.jpg', 'image'],
    ['lossy.webp', 'image'],
    ['three-frames.gif', 'image'],
    ['sine440.mp3', 'audio'],
    ['sine440.m4a', 'audio'],
    ['sine440.flac', 'audio'],
    ['sine440.opus.ogg', 'audio'],
    ['testsrc.h264.mp4', 'video'],
    ['testsrc.vp9.webm', 'video'],
    ['testsrc.h264.mkv', 'video'],
  ];
  for (const [name, kind] of files) seeds.push([name, kind, await load(name)]);
  const outcomes: Record<string, number> = {};
  const rng = new Rng(options.seed);
  const cases: Array<{ what: string; kind: Kind; bytes: Uint8Array }> = [];
  for (const [name, kind, bytes] of seeds) {
    for (let i = 0; i < options.perSeed; i++)
      cases.push({ what: `${name} mutation ${i} (seed ${options.seed})`, kind, bytes: mutate(bytes, rng) });
  }
  // The good JPEG's pixels before the pass: every thread must still decode it to these after.
  const goodJpeg = seeds[0]![2];
  const jpegOptions = { width: 64, height: 48, fit: 'stretch' } as const;
  const reference = (await pool.decode(goodJpeg, jpegOptions)).pixels;
  const parallel = options.parallel ?? pool.threads * 2;
  const slotBytes = CLIP_BYTES;
  const buffers = Array.from({ length: parallel }, () => pool.malloc(slotBytes));
  try {
    let next = 0;
    await Promise.all(
      buffers.map(async (ptr) => {
        while (next < cases.length) {
          const c = cases[next++]!;
          const code = await outcome(c.what, () => decodeCase(pool, c.kind, c.bytes, ptr));
          check(code !== 'over-budget' && code !== 'stalled', `${c.what}: ran into its time limit`);
          outcomes[code] = (outcomes[code] ?? 0) + 1;
        }
      }),
    );
  } finally {
    for (const ptr of buffers) pool.free(ptr);
  }
  await withBuffer(pool, CLIP_BYTES, async (ptr) => {
    const good = await pool.decodeVideo(await load('testsrc.h264.mp4'), ptr, CLIP);
    check(good.framesWritten === 4, 'the pool decodes a good video after the fuzz pass');
  });
  // Each thread's decoders survive what the pass threw at them (a libjpeg-turbo decompressor
  // left half-way through a damaged header once failed every later JPEG on its thread).
  const after = await Promise.all(Array.from({ length: pool.threads * 4 }, () => pool.decode(goodJpeg, jpegOptions)));
  check(
    after.every((r) => r.pixels.length === reference.length && r.pixels.every((v, i) => v === reference[i])),
    'a good JPEG decodes to the same pixels on every thread after the fuzz pass',
  );
  check(pool.stats().stuckThreads === 0, 'the fuzz pass left a pool thread held');
  return { cases: cases.length, outcomes };
}

function decodeCase(pool: DecodePool, kind: Kind, bytes: Uint8Array, ptr: number): Promise<unknown> {
  const timeLimitMs = 20_000;
  if (kind === 'image') return pool.decodeInto(bytes, ptr, { width: 32, height: 32, channels: 3, maxPixels: 1 << 24 });
  if (kind === 'audio')
    return pool.decodeAudio(bytes, ptr, { sampleRate: 8000, channels: 1, maxFrames: (CLIP_BYTES / 4) | 0, timeLimitMs });
  return pool.decodeVideo(bytes, ptr, { ...CLIP, timeLimitMs });
}

/**
 * Closing a pool with jobs queued behind its threads: every job ends, decoded or failed as
 * 'cancelled' (queued in C or in a fallback worker's queue) or 'closed' (still waiting in JS),
 * never as something else, and close() returns with nothing in flight.
 */
export async function closeWithQueuedJobs(mode: 'pthreads' | 'workers'): Promise<Record<string, number>> {
  const { DecodePool } = await import('../../src/decode/index.ts');
  const pool = await DecodePool.create({ threads: 1, mode, maxInFlight: 8 });
  const pattern = solidPatches(320, 240, 4, 4);
  const jpeg = encodeJpeg(pattern.rgb, 320, 240, { quality: 90 });
  const target = pool.malloc(64 * 64 * 3 * 24);
  const jobs = Array.from({ length: 24 }, (_, i) =>
    outcome(`job ${i}`, () => pool.decodeInto(jpeg, target + i * 64 * 64 * 3, { width: 64, height: 64 })),
  );
  await new Promise((resolve) => setTimeout(resolve, 5));
  await pool.close();
  const codes = await Promise.all(jobs);
  const counts: Record<string, number> = {};
  for (const code of codes) counts[code] = (counts[code] ?? 0) + 1;
  check(
    codes.every((c) => c === 'ok' || c === 'cancelled' || c === 'closed'),
    `outcomes after close: ${JSON.stringify(counts)}`,
  );
  check(
    (counts.cancelled ?? 0) + (counts.closed ?? 0) > 0,
    `closing right after 24 submissions stopped none of them: ${JSON.stringify(counts)}`,
  );
  check(pool.stats().inFlight === 0, 'jobs left in flight after close');
  return counts;
}

/** A WAV header claiming `rate` Hz and `channels` channels over `frames` frames of silence. */
function forgedWav(rate: number, channels: number, frames = 4): Uint8Array {
  const data = frames * channels * 2;
  const bytes = new Uint8Array(44 + data);
  const v = new DataView(bytes.buffer);
  const ascii = (at: number, s: string) => {
    for (let i = 0; i < s.length; i++) v.setUint8(at + i, s.charCodeAt(i));
  };
  ascii(0, 'RIFF');
  v.setUint32(4, 36 + data, true);
  ascii(8, 'WAVEfmt ');
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true);
  v.setUint16(22, channels, true);
  v.setUint32(24, rate, true);
  v.setUint32(28, (rate * channels * 2) >>> 0, true);
  v.setUint16(32, (channels * 2) & 0xffff, true);
  v.setUint16(34, 16, true);
  ascii(36, 'data');
  v.setUint32(40, data, true);
  return bytes;
}

/**
 * Audio headers that claim absurd sizes fail as 'too-large' from the header, before anything is
 * decoded or allocated for them; a video over maxPixels and a stream over maxDurationSeconds too.
 */
export async function forgedHeadersAreTooLarge(pool: DecodePool, load: FixtureLoader): Promise<void> {
  await withBuffer(pool, 4096 * 4 * 8, async (ptr) => {
    const audio = { sampleRate: 16000, channels: 1, maxFrames: 4096 };
    for (const [rate, channels] of [
      [2 ** 31 - 1, 1],
      [768_001, 2],
      [48_000, 65],
      [8000, 65_535],
    ] as const) {
      const code = await outcome(`WAV of ${rate} Hz × ${channels}`, () => pool.decodeAudio(forgedWav(rate, channels), ptr, audio));
      check(code === 'too-large', `a WAV declaring ${rate} Hz × ${channels} channels gave ${code}, not too-large`);
    }
    check((await pool.decodeAudio(forgedWav(48_000, 2, 480), ptr, audio)).framesWritten > 0, 'a plausible WAV header still decodes');
    const video = await load('testsrc.h264.mp4');
    await forgedStreamSizes(pool, load, ptr, video);
    check(
      (await outcome('video over maxPixels', () =>
        pool.decodeVideo(video, ptr, { width: 16, height: 16, frames: { indices: [0] }, maxPixels: 100 }),
      )) === 'too-large',
      'video over maxPixels',
    );
    check(
      (await outcome('video over maxDuration', () =>
        pool.decodeVideo(video, ptr, { width: 16, height: 16, frames: { indices: [0] }, maxDurationSeconds: 0.5 }),
      )) === 'too-large',
      'video over maxDurationSeconds',
    );
  });
}

/**
 * Sizes forged where the decoders read them: an H.264 SPS, VP9 key frame headers, FLAC's
 * STREAMINFO. Each forger rewrites only that field; writing back the true size must give the same
 * bytes, so a refusal below is the forged field's doing and not a broken file's.
 */
async function forgedStreamSizes(pool: DecodePool, load: FixtureLoader, ptr: number, mp4: Uint8Array): Promise<void> {
  const frames = { width: 16, height: 16, frames: { indices: [0] } };
  const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);
  check(same(forgeH264Size(mp4, 10, 8), mp4), 'forging the H.264 fixture to its own 10×8 macroblocks changed it');
  const webm = await load('testsrc.vp9.webm');
  check(same(forgeVp9Size(webm, 160, 120), webm), 'forging the VP9 fixture to its own 160×120 changed it');
  const flac = await load('sine440.flac');
  check(same(forgeFlacStreamInfo(flac, { sampleRate: 44_100 }), flac), 'forging the FLAC fixture to its own 44.1 kHz changed it');

  const cases: Array<[string, () => Promise<unknown>]> = [
    // 8192×8208: past the default 64 Mpx limit, within what libav's own size check lets through.
    ['an MP4 whose SPS declares 8192×8208', () => pool.decodeVideo(forgeH264Size(mp4, 512, 513), ptr, frames)],
    ['an MP4 whose SPS declares 65536×65536', () => pool.decodeVideo(forgeH264Size(mp4, 4096, 4096), ptr, frames)],
    ['a WebM whose VP9 header declares 8192×8208', () => pool.decodeVideo(forgeVp9Size(webm, 8192, 8208), ptr, frames)],
    ['a WebM whose VP9 header declares 65536×65536', () => pool.decodeVideo(forgeVp9Size(webm, 65536, 65536), ptr, frames)],
    ['a FLAC declaring 1048575 Hz', () => pool.decodeAudio(forgeFlacStreamInfo(flac, { sampleRate: 1_048_575 }), ptr, FLAC_AUDIO)],
    [
      'a FLAC declaring 2^36 - 1 samples (18 days)',
      () => pool.decodeAudio(forgeFlacStreamInfo(flac, { totalSamples: 2 ** 36 - 1 }), ptr, FLAC_AUDIO),
    ],
  ];
  for (const [what, run] of cases) {
    const code = await outcome(what, run);
    check(code === 'too-large', `${what} gave ${code}, not too-large`);
  }
  // The duration limit is the only thing refusing the long FLAC: without it, its 2 s decode.
  const long = forgeFlacStreamInfo(flac, { totalSamples: 2 ** 36 - 1 });
  check(
    (await pool.decodeAudio(long, ptr, { ...FLAC_AUDIO, maxDurationSeconds: 0 })).framesWritten > 0,
    'the long FLAC with no duration limit',
  );
}
const FLAC_AUDIO = { sampleRate: 16000, channels: 1, maxFrames: 4096 };

/** A request waiting for a free job record gives up when its signal aborts; the others go on. */
export async function abortWhileWaitingForASlot(mode: 'pthreads' | 'workers'): Promise<void> {
  const { DecodePool } = await import('../../src/decode/index.ts');
  const pool = await DecodePool.create({ threads: 1, mode, maxInFlight: 1 });
  try {
    const pattern = solidPatches(640, 480, 4, 4);
    const jpeg = encodeJpeg(pattern.rgb, 640, 480, { quality: 90 });
    const target = pool.malloc(640 * 480 * 3 * 3);
    const opts = { width: 640, height: 480, reducedScale: false } as const;
    const first = pool.decodeInto(jpeg, target, opts);
    const controller = new AbortController();
    const second = pool.decodeInto(jpeg, target + 640 * 480 * 3, opts, controller.signal);
    const third = pool.decodeInto(jpeg, target + 2 * 640 * 480 * 3, opts);
    controller.abort(new Error('stop waiting'));
    const gaveUp = await second.then(
      () => 'decoded',
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    check(gaveUp === 'stop waiting', `the aborted request ended with ${gaveUp}, not with the abort's reason`);
    check((await first).format === 'jpeg' && (await third).format === 'jpeg', 'the other requests decode');
    check(pool.stats().inFlight === 0 && pool.stats().queued === 0, `left in flight: ${JSON.stringify(pool.stats())}`);
    pool.free(target);
  } finally {
    await pool.close();
  }
}

/**
 * A JPEG whose header is damaged, then good ones, on a one-thread pool: the damaged one fails as
 * corrupt and every good one after it still decodes (the thread's libjpeg-turbo decompressor used
 * to keep the failed header's state and fail every later JPEG with the same error).
 */
export async function damagedJpegDoesNotPoisonItsThread(pool: DecodePool): Promise<void> {
  const pattern = solidPatches(64, 48, 3, 7);
  const good = encodeJpeg(pattern.rgb, 64, 48, { quality: 90 });
  const damaged = good.slice();
  damaged.fill(0xff, 2, 40);
  const options = { width: 32, height: 24 } as const;
  const reference = (await pool.decode(good, options)).pixels;
  for (const bad of [damaged, good.subarray(0, 200)]) {
    await rejectsWith(
      pool.decode(bad, options),
      (e) => e instanceof DecodeError && (e.code === 'corrupt' || e.code === 'truncated'),
      'a damaged JPEG fails as corrupt or truncated',
    );
    for (let i = 0; i < 3; i++) {
      const { pixels } = await pool.decode(good, options);
      check(
        pixels.every((v, k) => v === reference[k]),
        `good JPEG ${i} after a damaged one decodes to the same pixels`,
      );
    }
  }
}
