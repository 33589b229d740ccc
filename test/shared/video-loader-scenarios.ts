// Runtime-neutral checks of videoLoader(): the clips it hands out are the sampler's (same frames,
// same times, same labels), broken videos fail their own item with a typed error and nothing is
// lost, the GPU clips are the CPU clips normalised, and in browsers the WebCodecs road gives the
// wasm road's frames. Fixtures from scripts/make-fixtures.sh, loaded through each runtime's loader.
import { DecodeError, type DecodePool, type VideoClipBatch } from '../../src/decode/index.ts';
import { type GpuContext, readBuffer } from '../../src/gpu/index.ts';
import { normalizeReference } from '../../src/gpu/internal.ts';
import { sampleClips, videoLoader, type VideoDeviceBatch, type VideoLoaderOptions, type VideoReads } from '../../src/video/index.ts';
import { TandemError } from '../../src/errors/index.ts';
import { Rng } from '../../src/random/index.ts';
import { check } from './assert.ts';
import { mutate } from './fuzz-scenarios.ts';
import { hubStructFile } from './parquet-files.ts';
import type { FixtureLoader } from './media-scenarios.ts';

export const CLIP_FIXTURES = ['testsrc.h264.mp4', 'rgb.h264.mp4', 'testsrc.vp9.webm', 'testsrc.h264.mkv', 'testsrc.av1.mp4'] as const;
const MEAN = [0.5, 0.5, 0.5],
  STD = [0.25, 0.25, 0.25];
const BASE = {
  clip: { frames: 4, stride: 2 },
  sampler: 'uniform',
  clipsPerVideo: 2,
  size: 32,
  batchSize: 3,
  mean: MEAN,
  std: STD,
} as const satisfies Omit<VideoLoaderOptions, 'to'>;

async function items(load: FixtureLoader) {
  return Promise.all(CLIP_FIXTURES.map(async (name, label) => ({ bytes: await load(name), label, key: name })));
}

/** Every delivered clip: key → its frame times, label, and (GPU) its floats. */
interface Seen {
  times: number[];
  label: number;
  floats?: Float32Array;
  bytes?: Uint8Array;
}

export async function cpuClipsFollowTheSampler(
  pool: DecodePool,
  load: FixtureLoader,
  kind: 'uniform' | 'random' = 'uniform',
): Promise<void> {
  const source = await items(load);
  const seen = new Map<string, Seen>();
  const seed = 3;
  await using data = videoLoader(source, { ...BASE, sampler: kind, seed, pool });
  let batches = 0;
  for await (const batch of data) {
    batches++;
    check(batch.shape.slice(1).join() === '4,32,32,3', `shape ${batch.shape.join()}`);
    batch.keys.forEach((key, i) => {
      seen.set(key, { times: Array.from(batch.frameTimes.subarray(i * 4, i * 4 + 4)), label: batch.labels[i] ?? -2 });
    });
    batch.release();
  }
  check(batches === Math.ceil((2 * CLIP_FIXTURES.length) / 3), `${batches} batches`);
  check(data.failures().length === 0, `failures: ${data.failures().map((f) => `${f.key}: ${f.error}`)}`);
  // Every timeline from the file's own index (the MP4s' sample tables, the WebM's and the MKV's
  // blocks), none scanned by the demuxer; the times below are held to the demuxer's.
  const timelines = data.timelines();
  const mp4s = CLIP_FIXTURES.filter((name) => name.endsWith('.mp4')).length;
  check(timelines.index === CLIP_FIXTURES.length && timelines.scan === 0, `timelines ${JSON.stringify(timelines)}`);
  // The MP4s read in ranges (their index, then their clips' packets), the others whole.
  const reads = data.reads();
  check(reads.ranged === mp4s && reads.whole === CLIP_FIXTURES.length - mp4s, `reads ${JSON.stringify(reads)}`);
  for (const { bytes, label, key } of source) {
    const video = await pool.demuxVideo(bytes, { packets: false });
    const want = sampleClips(video, { framesPerClip: 4, stride: 2 }, { kind, clips: 2 }, { seed, epoch: 0, key });
    for (const clip of want) {
      const got = seen.get(`${key}#${clip.clipIndex}`);
      check(got !== undefined, `${key}#${clip.clipIndex} not delivered (got ${[...seen.keys()]})`);
      check(got.label === label, `${key}: label ${got.label}, expected ${label}`);
      const off = got.times.map((t, i) => Math.abs(t - (clip.frameTimes[i] ?? Number.NaN)));
      check(
        Math.max(...off) <= 0.0015,
        `${key}#${clip.clipIndex}: frame times ${got.times} against the sampler's ${Array.from(clip.frameTimes)}`,
      );
    }
  }
  check(data.held() === 0, `${data.held()} batch buffers still held`);
}

/**
 * Clips of one video that need some of the same frames (six 7-frame clips over a 20-frame file,
 * keyframes 5 apart) share one decode job: fewer jobs than clips, and every clip's pixels and
 * times are those the container road gives for that clip alone (libavformat's demuxer and seek,
 * not the index or the shared job). A pass stopped early leaves no staging block behind.
 */
export async function sharedDecodesGiveEachClipItsFrames(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const source = await items(load);
  const options = { ...BASE, clipsPerVideo: 6, batchSize: 4, seed: 2, pool } as const;
  const seen = new Map<string, { bytes: Uint8Array; times: Float64Array }>();
  {
    await using data = videoLoader(source, options);
    for await (const batch of data) {
      const clipBytes = batch.data.length / batch.count;
      batch.keys.forEach((key, i) => {
        seen.set(key, { bytes: batch.data.slice(i * clipBytes, (i + 1) * clipBytes), times: batch.frameTimes.slice(i * 4, i * 4 + 4) });
      });
      batch.release();
    }
    check(data.failures().length === 0, `failures: ${data.failures().map((f) => `${f.key}: ${f.error}`)}`);
    const decodes = data.decodes();
    const clips = 6 * CLIP_FIXTURES.length;
    check(decodes.clips === clips && decodes.shared > 0 && decodes.jobs < clips, `decodes ${JSON.stringify(decodes)} for ${clips} clips`);
  }
  const slot = 4 * 32 * 32 * 3;
  const target = pool.malloc(slot);
  try {
    for (const { bytes, key } of source) {
      const video = await pool.demuxVideo(bytes, { packets: false });
      for (const clip of sampleClips(video, { framesPerClip: 4, stride: 2 }, { kind: 'uniform', clips: 6 }, { seed: 2, epoch: 0, key })) {
        const got = seen.get(`${key}#${clip.clipIndex}`);
        check(got !== undefined, `${key}#${clip.clipIndex} not delivered`);
        const alone = await pool.decodeVideo(bytes, target, { frames: { frameTimes: Array.from(clip.frameTimes) }, width: 32, height: 32 });
        const want = new Uint8Array(pool.memory.buffer, target, slot);
        const differ = got.bytes.findIndex((v, i) => v !== want[i]);
        check(differ < 0, `${key}#${clip.clipIndex}: byte ${differ} differs from the clip decoded alone`);
        check(
          got.times.every((t, i) => Math.abs(t - (alone.timestamps[i] ?? Number.NaN)) < 1e-9),
          `${key}#${clip.clipIndex}: times ${got.times} against ${alone.timestamps}`,
        );
      }
    }
  } finally {
    pool.free(target);
  }
  // A pass stopped after its first batch: the shared decodes of clips never filled are freed.
  const heap = pool.stats().heapBytes;
  for (let pass = 0; pass < 3; pass++) {
    await using data = videoLoader(source, options);
    for await (const batch of data) {
      batch.release();
      break;
    }
  }
  check(pool.stats().heapBytes <= heap, `the pool holds ${pool.stats().heapBytes - heap} more bytes after three stopped passes`);
}

/** Videos that cannot give a clip, each for its own reason. */
async function brokenItems(load: FixtureLoader) {
  const rgb = await load('rgb.h264.mp4');
  const long = await load('long.h264.mp4');
  return [
    { bytes: long.subarray(0, 3000), label: 0, key: 'index-cut-off' },
    { bytes: new Uint8Array(20000).map((_, i) => (i * 2654435761) >>> 24), label: 0, key: 'random-bytes' },
    { bytes: await load('sine440.m4a'), label: 0, key: 'audio-only' },
    { bytes: new Uint8Array(0), label: 0, key: 'empty' },
    { bytes: rgb, label: 1, key: 'good' },
  ];
}

export async function brokenVideosFailTheirOwnItem(pool: DecodePool, load: FixtureLoader, to: GpuContext | 'cpu' = 'cpu'): Promise<void> {
  const source = await brokenItems(load);
  const delivered: string[] = [];
  await using data = videoLoader(source, { ...BASE, clipsPerVideo: 1, pool, to, failureBudget: { maxFailures: 10 } });
  for await (const batch of data) {
    delivered.push(...batch.keys);
    batch.release();
  }
  const failures = data.failures();
  check(JSON.stringify(delivered) === '["good"]', `delivered ${JSON.stringify(delivered)}`);
  const failed = failures.map((f) => f.key).sort();
  check(
    JSON.stringify(failed) === JSON.stringify(['audio-only', 'empty', 'index-cut-off', 'random-bytes']),
    `failed ${JSON.stringify(failed)}`,
  );
  for (const f of failures) {
    check(f.error instanceof DecodeError, `${f.key}: ${String(f.error)} is not a DecodeError`);
    check(f.stage === 'sample', `${f.key} failed in ${f.stage}`);
  }
  const code = (key: string) => (failures.find((f) => f.key === key)?.error as DecodeError | undefined)?.code;
  check(code('random-bytes') === 'unknown-format', `random bytes: ${code('random-bytes')}`);
  check(code('audio-only') === 'unknown-format', `audio only: ${code('audio-only')}`);
  check(code('empty') === 'empty', `empty: ${code('empty')}`);
  check(data.held() === 0, `${data.held()} batch buffers still held`);
}

/** Reads every clip of a GPU loader back (after the loop: the reads are the test's, not the loader's). */
async function gpuClips(gpu: GpuContext, options: VideoLoaderOptions, source: { bytes: Uint8Array; label: number; key: string }[]) {
  const kept: { batch: Pick<VideoDeviceBatch, 'keys' | 'labels' | 'frameTimes' | 'count'>; copy: GPUBuffer }[] = [];
  const data = videoLoader(source, { ...options, to: gpu });
  try {
    for await (const batch of data) {
      // A GPU-side copy, so the loader's buffer can go back at once.
      const copy = gpu.device.createBuffer({ size: batch.clips.size, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
      const encoder = gpu.device.createCommandEncoder();
      encoder.copyBufferToBuffer(batch.clips, 0, copy, 0, batch.clips.size);
      gpu.device.queue.submit([encoder.finish()]);
      kept.push({ batch: { keys: batch.keys, labels: batch.labels, frameTimes: batch.frameTimes, count: batch.count }, copy });
      batch.release();
    }
    check(data.failures().length === 0, `failures: ${data.failures().map((f) => `${f.key}: ${f.error}`)}`);
    check(data.held() === 0, `${data.held()} GPU batch buffers still held`);
    return { kept, roads: data.roads() };
  } finally {
    await data.close();
  }
}

async function unpack(gpu: GpuContext, kept: Awaited<ReturnType<typeof gpuClips>>['kept']): Promise<Map<string, Seen>> {
  const seen = new Map<string, Seen>();
  const clipFloats = 4 * 32 * 32 * 3;
  for (const { batch, copy } of kept) {
    const floats = new Float32Array(await readBuffer(gpu.device, copy));
    copy.destroy();
    batch.keys.forEach((key, i) => {
      seen.set(key, {
        times: Array.from(batch.frameTimes.subarray(i * 4, i * 4 + 4)),
        label: batch.labels[i] ?? -2,
        floats: floats.slice(i * clipFloats, (i + 1) * clipFloats),
      });
    });
  }
  return seen;
}

/** The wasm road to a GPU: each clip is the CPU loader's u8 clip normalised (NHWC per frame), to float rounding. */
export async function gpuClipsAreCpuClipsNormalised(
  pool: DecodePool,
  gpu: GpuContext,
  load: FixtureLoader,
  clipsPerVideo = 2,
): Promise<void> {
  const source = await items(load);
  const cpu = new Map<string, Uint8Array>();
  const options = { ...BASE, clipsPerVideo, pool };
  {
    await using data = videoLoader(source, options);
    for await (const batch of data) {
      batch.keys.forEach((key, i) => {
        cpu.set(key, batch.data.slice(i * 4 * 32 * 32 * 3, (i + 1) * 4 * 32 * 32 * 3));
      });
      batch.release();
    }
  }
  const { kept, roads } = await gpuClips(gpu, { ...options, backend: 'wasm' }, source);
  check(roads.wasm === clipsPerVideo * CLIP_FIXTURES.length && roads.webcodecs === 0, `roads ${JSON.stringify(roads)}`);
  const gpuSeen = await unpack(gpu, kept);
  check(gpuSeen.size === cpu.size, `${gpuSeen.size} GPU clips, ${cpu.size} CPU clips`);
  for (const [key, bytes] of cpu) {
    const floats = gpuSeen.get(key)?.floats;
    check(floats !== undefined, `${key}: no GPU clip`);
    const want = normalizeReference(bytes, { images: 4, height: 32, width: 32, channels: 3 }, { mean: MEAN, std: STD, layout: 'NHWC' });
    let worst = 0;
    for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs((floats[i] ?? 0) - (want[i] ?? 0)));
    check(worst < 1e-4, `${key}: GPU clip differs from the normalised CPU clip by ${worst}`);
  }
}

/**
 * `decode` (the loader's limits) reaches every wasm decode on both roads, CPU and GPU: each clip's
 * decode job is asked with the loader's `timeLimitMs` (a shared decode with its members' sum).
 */
export async function decodeLimitsReachEveryRoad(pool: DecodePool, gpu: GpuContext, load: FixtureLoader): Promise<void> {
  const source = await items(load);
  const asked: number[] = [];
  const decodeVideo = pool.decodeVideo.bind(pool);
  pool.decodeVideo = (input, target, options, signal) => {
    asked.push(options.timeLimitMs ?? Number.NaN);
    return decodeVideo(input, target, options, signal);
  };
  try {
    for (const to of ['cpu', gpu] as const) {
      asked.length = 0;
      await using data = videoLoader(source, { ...BASE, clipsPerVideo: 1, pool, to, backend: 'wasm', decode: { timeLimitMs: 12_345 } });
      for await (const batch of data) batch.release();
      check(data.failures().length === 0, `failures: ${data.failures().map((f) => `${f.key}: ${f.error}`)}`);
      const road = to === 'cpu' ? 'CPU' : 'GPU';
      check(asked.length === CLIP_FIXTURES.length, `${road}: ${asked.length} decode jobs`);
      check(
        asked.every((ms) => ms === 12_345),
        `${road}: the decode jobs were asked with timeLimitMs ${asked.join(', ')}`,
      );
    }
  } finally {
    pool.decodeVideo = decodeVideo;
  }
}

export interface RoadComparison {
  clips: number;
  meanAbs: number;
  worstClipMeanAbs: number;
  readbacks: number;
}

/**
 * Browsers: the WebCodecs road gives the wasm road's clips — the same keys in the same order, the
 * same frame times, pixels within `tolerance` (mean absolute difference on the 0..1 scale; the two
 * roads convert YUV to RGB in different code) — and `count` counts no readback while it runs.
 */
export async function webcodecsRoadMatchesWasmRoad(
  pool: DecodePool,
  gpu: GpuContext,
  load: FixtureLoader,
  count: <T>(fn: () => Promise<T>) => Promise<{ result: T; readbacks: number }>,
  tolerance: number,
): Promise<RoadComparison> {
  const source = await items(load);
  const wasm = await unpack(gpu, (await gpuClips(gpu, { ...BASE, pool, backend: 'wasm' }, source)).kept);
  const counted = await count(() => gpuClips(gpu, { ...BASE, pool, backend: 'webcodecs' }, source));
  check(counted.result.roads.webcodecs === 2 * CLIP_FIXTURES.length, `roads ${JSON.stringify(counted.result.roads)}`);
  const web = await unpack(gpu, counted.result.kept);
  check(JSON.stringify([...web.keys()]) === JSON.stringify([...wasm.keys()]), `keys ${[...web.keys()]} against ${[...wasm.keys()]}`);
  let sum = 0,
    n = 0,
    worstClip = 0;
  for (const [key, w] of wasm) {
    const c = web.get(key) as Seen;
    const off = c.times.map((t, i) => Math.abs(t - (w.times[i] ?? Number.NaN)));
    check(Math.max(...off) <= 0.0015, `${key}: WebCodecs frame times ${c.times}, wasm ${w.times}`);
    check(c.label === w.label, `${key}: labels ${c.label} and ${w.label}`);
    let clipSum = 0;
    const a = w.floats as Float32Array,
      b = c.floats as Float32Array;
    for (let i = 0; i < a.length; i++) clipSum += Math.abs((a[i] ?? 0) - (b[i] ?? 0)) * (STD[i % 3] ?? 1);
    worstClip = Math.max(worstClip, clipSum / a.length);
    sum += clipSum;
    n += a.length;
  }
  const result = { clips: wasm.size, meanAbs: sum / n, worstClipMeanAbs: worstClip, readbacks: counted.readbacks };
  check(result.readbacks === 0, `${result.readbacks} readbacks while the WebCodecs road ran`);
  check(
    worstClip <= tolerance,
    `the roads differ by ${(worstClip * 255).toFixed(2)}/255 on a clip (mean ${(result.meanAbs * 255).toFixed(2)}/255), over ${(tolerance * 255).toFixed(2)}/255`,
  );
  return result;
}

/**
 * The held-out mutations of the video fuzz (bit flips, overwritten runs, cuts, duplicated and
 * deleted spans), seeded, through a whole loader: every mutated video is delivered or fails with a
 * typed Tandem error under its own key, nothing hangs, every buffer comes back, and the loader
 * after it still decodes the good files. `matroskaReadWholeBelow: 0` walks every WebM and MKV
 * through ranged reads instead of in memory.
 */
export async function mutatedVideosFailTyped(
  pool: DecodePool,
  load: FixtureLoader,
  to: GpuContext | 'cpu',
  backend: 'wasm' | 'webcodecs' | 'auto',
  count: number,
  seed: number,
  matroskaReadWholeBelow?: number,
): Promise<{ delivered: number; failed: number; codes: Record<string, number> }> {
  const originals = await items(load);
  const rng = new Rng(seed);
  const source = Array.from({ length: count }, (_, i) => {
    const from = originals[i % originals.length] as { bytes: Uint8Array; label: number; key: string };
    return { bytes: mutate(from.bytes, rng), label: from.label, key: `mutant-${i}-${from.key}` };
  });
  const delivered = new Set<string>();
  {
    const failureBudget = { maxFailures: count };
    await using data = videoLoader(source, { ...BASE, clipsPerVideo: 1, pool, to, backend, failureBudget, matroskaReadWholeBelow });
    for await (const batch of data) {
      for (const key of batch.keys) delivered.add(key);
      batch.release();
    }
    const failed = new Set(data.failures().map((f) => f.key));
    const codes: Record<string, number> = {};
    for (const f of data.failures()) {
      check(f.error instanceof TandemError, `${f.key} (${f.stage}): ${String(f.error)} is not a typed Tandem error`);
      const code = `${f.stage}:${(f.error as TandemError & { code: string }).code}`;
      codes[code] = (codes[code] ?? 0) + 1;
    }
    for (const { key } of source)
      check(delivered.has(key) !== failed.has(key), `${key}: delivered ${delivered.has(key)}, failed ${failed.has(key)}`);
    check(data.held() === 0, `${data.held()} batch buffers still held`);
    const after = videoLoader(originals, { ...BASE, clipsPerVideo: 1, pool, to, backend });
    let good = 0;
    for await (const batch of after) {
      good += batch.count;
      batch.release();
    }
    await after.close();
    check(good === originals.length, `after the mutants, ${good} of ${originals.length} good videos decoded`);
    return { delivered: delivered.size, failed: failed.size, codes };
  }
}

/**
 * A variable-frame-rate file (gaps of 20, 60 and 100 ms; scripts/make-fixtures.sh): the demuxer's
 * timeline is ffprobe's, and time-based clips through the loader hold, in each slot, the frame shown
 * at its sample time — the last frame whose pts is at or before it — by a plain scan of ffprobe's list.
 */
export async function vfrClipsFollowTime(pool: DecodePool, load: FixtureLoader, webcodecs?: GpuContext): Promise<void> {
  const bytes = await load('vfr.h264.mp4');
  const pts = JSON.parse(new TextDecoder().decode(await load('vfr.h264.mp4.pts.json'))) as number[];
  const video = await pool.demuxVideo(bytes, { packets: false });
  check(video.frameTimes.length === pts.length, `${video.frameTimes.length} frame times, ffprobe ${pts.length}`);
  const origin = pts[0] ?? 0;
  for (const [i, t] of pts.entries())
    check(
      Math.abs((video.frameTimes[i] ?? Number.NaN) - (t - origin)) < 1e-4,
      `frame ${i}: ${video.frameTimes[i]} against ffprobe's ${t - origin}`,
    );
  const gaps = new Set(pts.slice(1).map((t, i) => Math.round((t - (pts[i] ?? 0)) * 1000)));
  check(gaps.size >= 3, `the fixture's gaps are not variable: ${[...gaps]}`);
  const fps = 12;
  const shownAt = (t: number) => {
    let pick = 0;
    for (let i = 0; i < pts.length; i++) if ((pts[i] ?? 0) - origin <= t + 1e-6) pick = i;
    return (pts[pick] ?? 0) - origin;
  };
  let clips = 0;
  // With a GPU, the WebCodecs road (VideoDecoder's own timestamps) must give the same frames.
  await using data = videoLoader([{ bytes, label: 0, key: 'vfr' }], {
    clip: { frames: 6, fps },
    sampler: 'all',
    size: 16,
    batchSize: 4,
    pool,
    pastEnd: 'error',
    ...(webcodecs ? { to: webcodecs, backend: 'webcodecs' as const } : {}),
  });
  for await (const batch of data) {
    for (let c = 0; c < batch.count; c++) {
      const clip = Number((batch.keys[c] ?? '').split('#')[1] ?? 0);
      for (let j = 0; j < 6; j++) {
        const sample = (clip * 6 + j) / fps;
        const got = batch.frameTimes[c * 6 + j] ?? Number.NaN;
        check(
          Math.abs(got - shownAt(sample)) < 0.0015,
          `clip ${clip} slot ${j}: frame at ${got} s for the time ${sample.toFixed(3)} s, the frame shown then is at ${shownAt(sample)} s`,
        );
      }
      clips++;
    }
    batch.release();
  }
  const span = (pts.at(-1) ?? 0) - origin;
  check(clips === Math.floor((span - 5 / fps) / (6 / fps)) + 1, `${clips} clips over ${span.toFixed(2)} s`);
  const roads = data.roads();
  check(
    webcodecs ? roads.webcodecs === clips && roads.wasm === 0 : roads.wasm === clips,
    `roads ${JSON.stringify(roads)} for ${clips} clips`,
  );
}

/**
 * 'random-crop': each clip's crop box and flip come from (seed, epoch, key, clip), so the same
 * epoch gives the same bytes, another epoch other crops, and no clip equals its plain cover decode.
 */
export async function clipCropsAreSeeded(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const source = (await items(load)).slice(0, 1);
  const run = async (transform: 'cover' | 'random-crop', epoch: number) => {
    const data = videoLoader(source, { ...BASE, transform, seed: 9, pool });
    data.setEpoch(epoch);
    const out: Uint8Array[] = [];
    for await (const batch of data) {
      out.push(batch.data.slice());
      batch.release();
    }
    await data.close();
    return out;
  };
  const same = (a: Uint8Array[], b: Uint8Array[]) => a.length === b.length && a.every((x, i) => x.every((v, j) => v === b[i]?.[j]));
  const first = await run('random-crop', 0);
  check(same(first, await run('random-crop', 0)), 'the same epoch gave other crops');
  check(!same(first, await run('random-crop', 1)), 'another epoch gave the same crops');
  check(!same(first, await run('cover', 0)), 'random-crop gave the plain cover clips');
}

/** Class names of the Parquet video file's ClassLabel. */
const VIDEO_CLASSES = ['pan', 'zoom', 'still', 'shake', 'orbit'];

/**
 * A Hub-shaped Parquet file of videos: `video` as the Hub's Video struct `{ bytes, path }`, `label`
 * a ClassLabel; row groups of two rows, and a last row whose video has no bytes.
 */
function videoParquetFile(videos: { bytes: Uint8Array; label: number }[]): Uint8Array<ArrayBuffer> {
  const video = [...videos.map((v, r) => ({ bytes: v.bytes, path: `clip${r}.mp4` })), { bytes: null, path: 'lost.mp4' }];
  const features = { video: { _type: 'Video' }, label: { names: VIDEO_CLASSES, _type: 'ClassLabel' } };
  return hubStructFile('video', video, [...videos.map((v) => v.label), 0], 2, JSON.stringify({ info: { features } }));
}

/** Every batch as text: keys, labels, frame times and a digest of the pixels. */
async function batchesOf(data: AsyncIterable<VideoClipBatch>): Promise<string[]> {
  const out: string[] = [];
  for await (const b of data) {
    let digest = 0;
    for (const byte of b.data) digest = (digest * 31 + byte) >>> 0;
    out.push(`${b.keys.join()}|${b.labels.join()}|${b.frameTimes.join()}|${digest}`);
    b.release();
  }
  return out;
}

/**
 * `{ parquet: [...] }` for videoLoader(): each row is a video, labelled by its ClassLabel (names
 * from the file's metadata), read from its row group when the loader reads it. The batches are
 * those of the same videos given as a list under the same keys (keys, labels, frame times,
 * pixels); the row without bytes fails alone, typed, in the read stage; two ranks share the rows.
 */
export async function parquetVideosAreTheListsClips(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const videos = await items(load);
  const file = new File([videoParquetFile(videos)], 'videos.parquet');
  const options = { ...BASE, seed: 5, pool } as const;
  await using fromParquet = videoLoader({ parquet: [file] }, options);
  const got = await batchesOf(fromParquet);
  check(JSON.stringify(await fromParquet.classes()) === JSON.stringify(VIDEO_CLASSES), `classes ${await fromParquet.classes()}`);
  const failures = fromParquet.failures();
  check(
    failures.length === 1 &&
      failures[0]?.key === `videos.parquet#${videos.length}` &&
      failures[0].stage === 'read' &&
      failures[0].error instanceof TandemError,
    `the row without bytes fails alone, typed: ${failures.map((f) => `${f.key} ${f.stage} ${f.error}`)}`,
  );
  const asList = videos.map((v, r) => ({ bytes: v.bytes, label: v.label, key: `videos.parquet#${r}` }));
  await using fromList = videoLoader(asList, options);
  const want = await batchesOf(fromList);
  check(
    got.length === want.length && got.every((b, i) => b === want[i]),
    `Parquet batches differ from the list's:\n${got.join('\n')}\n--\n${want.join('\n')}`,
  );
  check(fromParquet.held() === 0, `${fromParquet.held()} batch buffers still held`);
  const ranks: string[][] = [];
  for (const rank of [0, 1]) {
    await using share = videoLoader({ parquet: [file] }, { ...options, shuffle: true, rank, worldSize: 2 });
    ranks.push((await batchesOf(share)).flatMap((b) => (b.split('|')[0] ?? '').split(',')).map((k) => k.replace(/#\d+$/, '')));
  }
  const [a = [], b = []] = ranks;
  check(
    a.every((k) => !b.includes(k)),
    `a video on both ranks: ${a.filter((k) => b.includes(k))}`,
  );
  check(new Set([...a, ...b]).size === videos.length, `every readable video on one rank: ${[...new Set([...a, ...b])]}`);
}

/**
 * The bytes of each clip's GOPs, by ffprobe's packets (presentation order, no B-frames): from the
 * keyframe at or before the clip's first frame `start` to the keyframe after its last
 * (start + span − 1), summed over the clips.
 */
export function clipGopBytes(packets: ReadonlyArray<{ size: string; flags: string }>, starts: readonly number[], span: number): number {
  let bytes = 0;
  for (const first of starts) {
    let from = first;
    while (from > 0 && packets[from]?.flags[0] !== 'K') from--;
    let to = first + span;
    while (to < packets.length && packets[to]?.flags[0] !== 'K') to++;
    for (let k = from; k < to; k++) bytes += Number(packets[k]?.size ?? 0);
  }
  return bytes;
}

/**
 * The first frame time of each clip over an epoch of `data` (clips of `frames` frames), rounded in
 * units of 1 / unitsPerSecond seconds: the frame numbers ffprobe's packets are indexed by.
 */
export async function clipStartFrames(
  data: AsyncIterable<{ count: number; frameTimes: ArrayLike<number>; release(): void }>,
  frames: number,
  unitsPerSecond: number,
): Promise<number[]> {
  const starts: number[] = [];
  for await (const batch of data) {
    for (let i = 0; i < batch.count; i++) starts.push(Math.round((batch.frameTimes[i * frames] ?? Number.NaN) * unitsPerSecond));
    batch.release();
  }
  return starts;
}

/** ffprobe's packet list of long.h264.mp4 (scripts/make-fixtures.sh: 10 fps, no B-frames, a keyframe every 5 s). */
interface ProbedPackets {
  packets: { pts: number; size: string; flags: string }[];
}

/**
 * A long video read in ranges: three clips of long.h264.mp4 (60 s, 879 KB) read the file's index
 * and their own GOPs, no more: the bytes read are under twice their GOPs' bytes (the oracle:
 * ffprobe's packet sizes and key flags, scripts/make-fixtures.sh), a small part of the file.
 * long.vp9.webm (60 s, 972 KB, frames of 1.6 KB) is walked in ranges too
 * (`matroskaReadWholeBelow: 0` here, as for a file over 16 MiB): over frames that small, and over
 * HTTP, the walk reads the file through in a few large reads, then the clips' packets. `source` is
 * how the runtime names the file (a URL on a 127.0.0.1 server, a path, a File); `served` is the
 * server's count of body bytes, where there is one: it equals the loader's.
 */
export async function longVideoReadsItsGops(
  pool: DecodePool,
  source: string | { file: Blob; key: string },
  load: FixtureLoader,
  served?: () => number,
  name = 'long.h264.mp4',
): Promise<void> {
  const probed = JSON.parse(new TextDecoder().decode(await load(`${name}.packets.json`))) as ProbedPackets;
  const fileBytes = (await load(name)).length;
  await using data = videoLoader([source], {
    matroskaReadWholeBelow: 0,
    clip: { frames: 4, stride: 2 },
    sampler: 'uniform',
    clipsPerVideo: 3,
    size: 32,
    batchSize: 3,
    pool,
  });
  const starts = await clipStartFrames(data, 4, 10); // 10 fps
  check(data.failures().length === 0, `failures: ${data.failures().map((f) => `${f.key}: ${f.error}`)}`);
  check(starts.length === 3 && starts.every((s) => s >= 0), `clip starts ${starts}`);
  const gopBytes = clipGopBytes(probed.packets, starts, 6 + 1);
  const reads = data.reads();
  if (served) check(served() === reads.bytes, `the server sent ${served()} bytes, the loader counted ${reads.bytes}`);
  check(reads.ranged === 1 && reads.whole === 0, `reads ${JSON.stringify(reads)}`);
  if (name.endsWith('.webm')) {
    // The MP4 index reader's look at the head (16 KiB), the walk, the clips' packets.
    const most = (16 << 10) + fileBytes + 2 * gopBytes;
    check(reads.requests <= 8 && reads.bytes <= most, `reads ${JSON.stringify(reads)} of a file of ${fileBytes}`);
    return;
  }
  check(reads.bytes <= 2 * gopBytes, `read ${reads.bytes} bytes for clips whose GOPs hold ${gopBytes}`);
  check(reads.bytes < fileBytes / 3, `read ${reads.bytes} of the file's ${fileBytes} bytes`);
}

/**
 * Indexes kept for later epochs (`indexCacheBytes`): over `sources` (videos that take ranged
 * reads), the second epoch takes every video's index from the first epoch's read and reads less,
 * in ranges (a WebM read whole in the first epoch reads only its clips' packets in the second);
 * and its clips are byte for byte those of a loader that keeps no index.
 */
export async function indexesKeptForLaterEpochs(pool: DecodePool, sources: string[]): Promise<void> {
  const run = async (indexCacheBytes: number) => {
    await using data = videoLoader(sources, {
      clip: { frames: 4, stride: 2 },
      sampler: 'random',
      clipsPerVideo: 2,
      size: 32,
      batchSize: 4,
      seed: 3,
      shuffle: false,
      pool,
      indexCacheBytes,
    });
    const epochs: { reads: VideoReads; clips: string[] }[] = [];
    for (let e = 0; e < 2; e++) {
      const before = data.reads();
      const clips: string[] = [];
      for await (const batch of data) {
        for (let i = 0; i < batch.count; i++) clips.push(`${batch.keys[i]} ${Array.from(batch.frameTimes.subarray(i * 4, i * 4 + 4))}`);
        clips.push(Array.from(batch.data, (b) => b.toString(16)).join(''));
        batch.release();
      }
      const after = data.reads();
      const reads = { ...after };
      for (const k of Object.keys(reads) as (keyof VideoReads)[]) reads[k] = after[k] - before[k];
      epochs.push({ reads, clips });
    }
    check(data.failures().length === 0, `failures: ${data.failures().map((f) => `${f.key}: ${f.error}`)}`);
    return epochs;
  };
  const [first, second] = await run(64 << 20);
  const [plainFirst, plainSecond] = await run(0);
  check(first !== undefined && second !== undefined && plainFirst !== undefined && plainSecond !== undefined, 'two epochs each');
  check(
    first.reads.cachedIndexes === 0 && second.reads.cachedIndexes === sources.length,
    `cached: ${first.reads.cachedIndexes}, ${second.reads.cachedIndexes}`,
  );
  check(second.reads.ranged === sources.length && second.reads.whole === 0, `second epoch: ${JSON.stringify(second.reads)}`);
  check(second.reads.bytes < first.reads.bytes, `second epoch read ${second.reads.bytes} bytes, the first ${first.reads.bytes}`);
  check(plainSecond.reads.cachedIndexes === 0, `no cache: ${JSON.stringify(plainSecond.reads)}`);
  check(second.reads.bytes < plainSecond.reads.bytes, `with the cache ${second.reads.bytes} bytes, without ${plainSecond.reads.bytes}`);
  check(JSON.stringify(first.clips) === JSON.stringify(plainFirst.clips), 'first epochs differ with and without the cache');
  check(JSON.stringify(second.clips) === JSON.stringify(plainSecond.clips), 'second epochs differ with and without the cache');
  check(JSON.stringify(first.clips) !== JSON.stringify(second.clips), 'the epochs drew the same clips');
}
