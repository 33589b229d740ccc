// videoLoader()'s options: every one checked when the loader is made, before anything is allocated.
import type { DecodePool } from '../decode/index.ts';
import { OptionChecker } from '../errors/index.ts';
import type { GpuContext } from '../gpu/index.ts';
import {
  checkCommonOptions,
  COMMON_OPTIONS,
  gpuTarget,
  isTfjs,
  type CommonLoaderOptions,
  type CommonLoaderSettings,
  type TfNamespaceLike,
} from '../loader/internal.ts';
import { hardwareConcurrency } from '../runtime/index.ts';
import type { ClipSampler, PastEndPolicy } from './samplers.ts';
import { stateMismatch, type VideoLoaderState } from './state.ts';

/** Which decoder a clip goes through: WebCodecs where the browser takes the file, else the wasm threads. */
export type VideoBackend = 'auto' | 'wasm' | 'webcodecs';

export interface VideoLoaderOptions extends CommonLoaderOptions {
  /** Frames per clip and their spacing: `stride` frames apart (default 1), or `fps` samples a second (each the frame shown then). */
  clip: { frames: number; stride?: number; fps?: number };
  /** Which clips of each video (default 'random'): 'random' or 'uniform' give `clipsPerVideo` clips, 'all' every clip once. */
  sampler?: 'random' | 'uniform' | 'all' | ClipSampler;
  /** Clips per video for 'random' and 'uniform' (default 1). */
  clipsPerVideo?: number;
  /** Slots past a video's end (default 'repeat-last'; 'error' fails a video shorter than a clip). */
  pastEnd?: PastEndPolicy;
  /** Frame size: a side or [height, width] (default 112). */
  size?: number | readonly [number, number];
  /** 'cover' (default): shorter side to size, centre crop; 'random-crop': one RandomResizedCrop box and flip per clip; 'stretch'. */
  transform?: 'cover' | 'random-crop' | 'stretch';
  /** Share of the frame's area the random crop keeps (default [0.25, 1]). */
  cropScale?: readonly [number, number];
  /**
   * 'auto' (default): WebCodecs for the files the browser's VideoDecoder takes, wasm for the rest,
   * and wasm throughout on a CPU adapter (SwiftShader, lavapipe), where it is faster; 'webcodecs'
   * only (a file it does not take fails 'unknown-format'); 'wasm' only. WebCodecs needs `to` a GPU.
   */
  backend?: VideoBackend;
  /** 'cpu' (default): u8 clips in wasm memory; a GPUDevice or GpuContext: normalised f32 clips on it. */
  to?: 'cpu' | GPUDevice | GpuContext | TfNamespaceLike;
  /** GPU and tf.js: per-channel mean and std on the 0..1 scale (default ImageNet's). */
  mean?: readonly number[];
  std?: readonly number[];
  /** WebCodecs: decoders at once (default 2) and chunks queued in each (default 8). */
  decoders?: number;
  decodeQueueSize?: number;
  threads?: number;
  pool?: DecodePool;
  /**
   * A WebM or MKV file under this many bytes is read whole, in one read (default 16 MiB). A larger
   * one has its block headers walked through ranged reads, and then only its clips' packets are
   * read: a local file or Blob header by header over large frames and in 1 MiB windows over small
   * ones; an http(s) URL in 8 MiB windows, as each read is a round trip.
   */
  matroskaReadWholeBelow?: number;
  /**
   * Bytes of video indexes (frame times, packet offsets and sizes, about 45 bytes a frame) kept for
   * later epochs (default 64 MiB; 0 keeps none): a video seen before, read in ranges, reads only its
   * clips' packets. Keyed by the item's key and size; the least recently used go first.
   */
  indexCacheBytes?: number;
  /** Decode limits for every video. */
  decode?: { maxPixels?: number; maxDurationSeconds?: number; timeLimitMs?: number };
  /** Continue where a loader over the same source and settings stood: its `state()` (docs/loader.md). */
  resumeFrom?: VideoLoaderState;
}

export interface VideoLoaderSettings extends CommonLoaderSettings {
  frames: number;
  stride: number | undefined;
  fps: number | undefined;
  sampler: ClipSampler;
  pastEnd: PastEndPolicy;
  height: number;
  width: number;
  transform: 'cover' | 'random-crop' | 'stretch';
  cropScale: readonly [number, number];
  backend: VideoBackend;
  to: 'cpu' | GPUDevice | GpuContext | TfNamespaceLike;
  mean: readonly number[];
  std: readonly number[];
  decoders: number;
  decodeQueueSize: number;
  threads: number;
  pool: DecodePool | undefined;
  matroskaReadWholeBelow: number;
  indexCacheBytes: number;
  decode: { maxPixels?: number; maxDurationSeconds?: number; timeLimitMs?: number };
  resumeFrom: VideoLoaderState | undefined;
}

const KNOWN = [
  ...COMMON_OPTIONS,
  'clip',
  'sampler',
  'clipsPerVideo',
  'pastEnd',
  'size',
  'transform',
  'cropScale',
  'backend',
  'to',
  'mean',
  'std',
  'decoders',
  'decodeQueueSize',
  'threads',
  'pool',
  'matroskaReadWholeBelow',
  'indexCacheBytes',
  'decode',
  'resumeFrom',
] as const;

/**
 * Below this size one whole read is the quicker way to a Matroska file's blocks (a walk in ranges
 * took 1.75× its time on 6.5 MB of 3.6 KB frames) and holds little; above it the walk in ranges
 * is as quick or quicker (0.75× on 44 MB of 24 KB frames, bench/matroska-reads.ts) and holds
 * 1 MiB at a time instead of the file.
 */
const MATROSKA_READ_WHOLE_BELOW = 16 << 20;

const IMAGENET_MEAN = [0.485, 0.456, 0.406],
  IMAGENET_STD = [0.229, 0.224, 0.225];

export function checkVideoLoaderOptions(options: VideoLoaderOptions): VideoLoaderSettings {
  const o = new OptionChecker('videoLoader options', options, KNOWN);
  const clip = o.raw('clip');
  if (typeof clip !== 'object' || clip === null) o.fail('clip', 'an object { frames, stride? | fps? }');
  const c = new OptionChecker('videoLoader options.clip', clip, ['frames', 'stride', 'fps']);
  const frames = c.integer('frames', 0, 1, 4096);
  if (c.raw('stride') !== undefined && c.raw('fps') !== undefined) c.fail('fps', 'left out when stride is given');
  const stride = c.optionalInteger('stride', 1, 1 << 20);
  const fps = c.raw('fps') === undefined ? undefined : c.number('fps', 0, 1e-6, 1e5);
  const [height, width] = checkSize(o);
  const common = checkCommonOptions(o, { batchSize: 8, readConcurrency: 8 });
  const to = checkTarget(o);
  const backend = o.oneOf<VideoBackend>('backend', 'auto', ['auto', 'wasm', 'webcodecs']);
  if (backend === 'webcodecs' && (to === 'cpu' || isTfjs(to)))
    o.fail('backend', "'wasm' or 'auto' when `to` is 'cpu' or tf.js (WebCodecs frames go to a GPU)");
  const cropScale = o.numbers('cropScale', 2, 0) ?? [0.25, 1];
  if (!((cropScale[0] ?? 0) <= (cropScale[1] ?? 0) && (cropScale[1] ?? 0) <= 1)) o.fail('cropScale', '[lo, hi] with 0 < lo ≤ hi ≤ 1');
  const pool = o.raw('pool');
  if (pool !== undefined && (typeof pool !== 'object' || pool === null || typeof (pool as DecodePool).decodeVideo !== 'function'))
    o.fail('pool', 'a DecodePool');
  const decode = o.raw('decode') ?? {};
  const d = new OptionChecker('videoLoader options.decode', decode, ['maxPixels', 'maxDurationSeconds', 'timeLimitMs']);
  d.optionalInteger('maxPixels', 1);
  if (d.raw('maxDurationSeconds') !== undefined) d.number('maxDurationSeconds', 0, 0);
  d.optionalInteger('timeLimitMs', 0);
  const resumeFrom = o.raw('resumeFrom');
  const mismatch = resumeFrom === undefined ? undefined : stateMismatch(resumeFrom);
  if (mismatch) o.fail('resumeFrom', mismatch);
  return {
    ...common,
    frames,
    stride,
    fps,
    sampler: checkSampler(o),
    pastEnd: o.oneOf<PastEndPolicy>('pastEnd', 'repeat-last', ['repeat-last', 'wrap', 'error']),
    height,
    width,
    transform: o.oneOf('transform', 'cover', ['cover', 'random-crop', 'stretch']),
    cropScale: [cropScale[0] ?? 0.25, cropScale[1] ?? 1],
    backend,
    to,
    mean: o.numbers('mean', 3) ?? IMAGENET_MEAN,
    std: o.numbers('std', 3, 0) ?? IMAGENET_STD,
    decoders: o.integer('decoders', 2, 1, 16),
    decodeQueueSize: o.integer('decodeQueueSize', 8, 1, 256),
    threads: o.integer('threads', hardwareConcurrency(), 1, 256),
    pool: pool as DecodePool | undefined,
    matroskaReadWholeBelow: o.integer('matroskaReadWholeBelow', MATROSKA_READ_WHOLE_BELOW, 0, Number.MAX_SAFE_INTEGER),
    indexCacheBytes: o.integer('indexCacheBytes', 64 << 20, 0, Number.MAX_SAFE_INTEGER),
    decode: decode as VideoLoaderSettings['decode'],
    resumeFrom: resumeFrom as VideoLoaderState | undefined,
  };
}

function checkSampler(o: OptionChecker): ClipSampler {
  const s = o.raw('sampler') ?? 'random';
  const clips = o.integer('clipsPerVideo', 1, 1, 65536);
  if (s === 'random' || s === 'uniform') return { kind: s, clips };
  if (s === 'all') return { kind: 'all' };
  if (typeof s === 'object' && s !== null && typeof (s as { kind?: unknown }).kind === 'string') return s as ClipSampler;
  return o.fail('sampler', "'random', 'uniform', 'all' or a sampler object ({ kind, clips | hop })");
}

function checkSize(o: OptionChecker): [number, number] {
  const size = o.raw('size') ?? 112;
  const side = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 4096;
  if (side(size)) return [size as number, size as number];
  if (Array.isArray(size) && size.length === 2 && side(size[0]) && side(size[1])) return [size[0] as number, size[1] as number];
  return o.fail('size', 'a side in [1, 4096] or [height, width]');
}

function checkTarget(o: OptionChecker): VideoLoaderSettings['to'] {
  const to = o.raw('to') ?? 'cpu';
  if (to === 'cpu') return to;
  const gpu = gpuTarget(to);
  if (gpu) return gpu;
  if (isTfjs(to)) return to;
  return o.fail('to', "'cpu', a GPUDevice, a GpuContext (acquireGpu()) or TensorFlow.js's namespace");
}
