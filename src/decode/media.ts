// Audio and video jobs: the request and result halves of the job record for DecodePool.decodeAudio
// and DecodePool.decodeVideo, plus helpers that need no pool (clip cutting, frame counts).
import { CODEC_NAMES, MAX_AUDIO_CHANNELS, MAX_CLIP_FRAMES, MEDIA_FORMAT_NAMES, Field, JobKind, SelectMode } from './abi.ts';
import { DecodeError } from './errors.ts';
import { writeResize, type ResizeOptions } from './options.ts';

export type MediaFormat = (typeof MEDIA_FORMAT_NAMES)[number];
export type MediaCodec = (typeof CODEC_NAMES)[number];

export interface AudioDecodeOptions {
  /** Output sample rate in Hz (1..384000). */
  sampleRate: number;
  /** Output channel count (1..8): the source is mixed up or down to it. */
  channels: number;
  /** Capacity of the target in sample frames; decoding stops when it is full. */
  maxFrames: number;
  /** Start this many seconds after the stream's start (default 0). */
  offsetSeconds?: number;
  /**
   * Refuse files declaring a longer duration, before decoding anything (default 24 hours, 0: no
   * limit). Nothing is allocated from a declared duration; the limit keeps a forged header from
   * passing as a real stream.
   */
  maxDurationSeconds?: number;
  /** Wall-clock limit for the job in ms; past it the item fails as 'over-budget' (default 60 000, 0: none). Media time is in seconds, wall-clock limits in ms. */
  timeLimitMs?: number;
}

export interface DecodedAudioInfo {
  /** Sample frames written (each `channels` f32 values); the rest of the target is zero. */
  framesWritten: number;
  sourceSampleRate: number;
  sourceChannels: number;
  /** As declared by the container; NaN when unknown. */
  durationSeconds: number;
  format: MediaFormat;
  codec: MediaCodec;
  onPoolThread: boolean;
}

/** Which frames a video job decodes; the clip holds `frameCount(frames)` slots in this order. */
export type FrameSelection =
  /** Frame numbers in presentation order, from 0. */
  | { indices: readonly number[] }
  /** Times in seconds from the stream's start: each gets the frame shown at that time. */
  | { times: readonly number[] }
  /**
   * Frames' own presentation times in seconds, as the demuxer gives them (`demuxVideo`'s
   * `frameTimes`): each gets that frame. A frame at none of them that no other frame references
   * (a non-reference B-frame, say) is not decoded at all, which `times` cannot promise.
   */
  | { frameTimes: readonly number[] }
  /** `count` frames at `fps`, from `startSeconds` (default 0); those past the end stay empty. */
  | { fps: number; count: number; startSeconds?: number };

/** Each selected frame is fitted into its slot of the clip as an image would be. */
export interface VideoDecodeOptions extends ResizeOptions {
  frames: FrameSelection;
  /** Mirror every frame left to right after the resize (the whole slot, padding included); default false. */
  flip?: boolean;
  /**
   * Refuse files declaring a longer duration, before decoding anything (default 24 hours, 0: no
   * limit). Nothing is allocated from a declared duration; the limit keeps a forged header from
   * passing as a real stream.
   */
  maxDurationSeconds?: number;
  /** Wall-clock limit for the job in ms; past it the item fails as 'over-budget' (default 60 000, 0: none). Media time is in seconds, wall-clock limits in ms. */
  timeLimitMs?: number;
}

export interface DecodedVideoInfo {
  /** Slots that received a frame; slots whose time or index lies past the end stay zero. */
  framesWritten: number;
  /** Presentation time in seconds of the frame in each slot (ms precision); NaN for empty slots. */
  timestamps: Float64Array;
  sourceWidth: number;
  sourceHeight: number;
  /** Average frame rate as the container states it; 0 when unknown. */
  frameRate: number;
  durationSeconds: number;
  format: MediaFormat;
  codec: MediaCodec;
  onPoolThread: boolean;
}

const MAX_MS = 0x7fffffff;

export function badRequest(detail: string): never {
  throw new DecodeError('bad-request', detail);
}

function toMs(seconds: number, what: string): number {
  const ms = Math.round(seconds * 1000);
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_MS) badRequest(`${what} must be between 0 and ${MAX_MS / 1000} seconds`);
  return ms;
}

/** Declared durations past a day are refused unless the caller raises maxDurationSeconds. */
const DEFAULT_MAX_DURATION_SECONDS = 24 * 3600;
/** The default wall-clock limit of an audio or video job, in ms. */
export const DEFAULT_MEDIA_TIME_LIMIT_MS = 60_000;

export function timeLimitMs(ms: number | undefined): number {
  const limit = ms ?? DEFAULT_MEDIA_TIME_LIMIT_MS;
  if (!Number.isFinite(limit) || limit < 0 || limit > MAX_MS) badRequest(`timeLimitMs must be between 0 and ${MAX_MS}`);
  return limit === 0 ? 0 : Math.max(1, Math.round(limit));
}

export function limitMs(seconds: number | undefined): number {
  const s = seconds ?? DEFAULT_MAX_DURATION_SECONDS;
  return s === 0 ? 0 : Math.max(1, toMs(s, 'maxDurationSeconds'));
}

/** How many clip slots a selection fills. */
export function frameCount(frames: FrameSelection): number {
  const n =
    'indices' in frames
      ? frames.indices.length
      : 'times' in frames
        ? frames.times.length
        : 'frameTimes' in frames
          ? frames.frameTimes.length
          : frames.count;
  if (!Number.isInteger(n) || n < 1 || n > MAX_CLIP_FRAMES) badRequest(`a clip holds 1 to ${MAX_CLIP_FRAMES} frames, not ${n}`);
  return n;
}

/** @internal Writes an audio request into a cleared job record. */
export function fillAudio(w: Int32Array, targetPtr: number, o: AudioDecodeOptions): void {
  if (!Number.isInteger(o.channels) || o.channels < 1 || o.channels > MAX_AUDIO_CHANNELS)
    badRequest(`channels must be 1..${MAX_AUDIO_CHANNELS}`);
  if (!Number.isInteger(o.sampleRate) || o.sampleRate < 1 || o.sampleRate > 384000)
    badRequest('sampleRate must be an integer in 1..384000');
  if (!Number.isInteger(o.maxFrames) || o.maxFrames < 1 || o.maxFrames * o.channels * 4 > 0x7fffffff)
    badRequest('maxFrames must be a positive integer fitting 2 GiB of f32');
  w[Field.Kind] = JobKind.Audio;
  w[Field.Dst] = targetPtr;
  w[Field.Channels] = o.channels;
  w[Field.SampleRate] = o.sampleRate;
  w[Field.MaxFrames] = o.maxFrames;
  w[Field.StartMs] = toMs(o.offsetSeconds ?? 0, 'offsetSeconds');
  w[Field.MaxDurationMs] = limitMs(o.maxDurationSeconds);
  w[Field.TimeLimitMs] = timeLimitMs(o.timeLimitMs);
}

/** @internal Writes a video request; `aux` (at `auxPtr`) holds 2 × frameCount i32: selection, then pts out. */
export function fillVideo(w: Int32Array, targetPtr: number, o: VideoDecodeOptions, auxPtr: number, aux: Int32Array): void {
  const n = frameCount(o.frames);
  if (aux.length < 2 * n) badRequest('internal: selection array too small');
  const f = o.frames;
  if ('indices' in f) {
    w[Field.SelectMode] = SelectMode.Indices;
    f.indices.forEach((index, i) => {
      if (!Number.isInteger(index) || index < 0 || index > MAX_MS) badRequest(`frame index ${index} is not a non-negative integer`);
      aux[i] = index;
    });
  } else if ('times' in f) {
    w[Field.SelectMode] = SelectMode.TimesMs;
    f.times.forEach((t, i) => {
      aux[i] = toMs(t, 'a frame time');
    });
  } else if ('frameTimes' in f) {
    // A frame's own time in whole µs (the demuxer's), rounded up to the ms in integers: the job
    // rounds each frame's pts the same way to match it against these.
    w[Field.SelectMode] = SelectMode.FrameTimesMs;
    f.frameTimes.forEach((t, i) => {
      const us = Math.round(t * 1e6);
      aux[i] = toMs(Math.floor((us + 999) / 1000) / 1000, 'a frame time');
    });
  } else {
    if (!(f.fps > 0) || f.fps * 1000 > MAX_MS) badRequest('fps must be positive');
    w[Field.SelectMode] = SelectMode.Rate;
    w[Field.FpsMilli] = Math.max(1, Math.round(f.fps * 1000));
    w[Field.StartMs] = toMs(f.startSeconds ?? 0, 'startSeconds');
  }
  w[Field.Kind] = JobKind.Video;
  writeResize(w, targetPtr, o);
  w[Field.Flip] = o.flip ? 1 : 0;
  w[Field.MaxFrames] = n;
  w[Field.Select] = auxPtr;
  w[Field.PtsOut] = auxPtr + 4 * n;
  w[Field.MaxDurationMs] = limitMs(o.maxDurationSeconds);
  w[Field.TimeLimitMs] = timeLimitMs(o.timeLimitMs);
}

export function duration(w: Int32Array): number {
  const ms = w[Field.DurationMs] ?? -1;
  return ms < 0 ? Number.NaN : ms / 1000;
}

/** @internal */
export function readAudio(w: Int32Array): DecodedAudioInfo {
  return {
    framesWritten: w[Field.FramesOut] ?? 0,
    sourceSampleRate: w[Field.SrcRate] ?? 0,
    sourceChannels: w[Field.SrcChannels] ?? 0,
    durationSeconds: duration(w),
    format: MEDIA_FORMAT_NAMES[w[Field.Format] ?? 0] ?? 'unknown',
    codec: CODEC_NAMES[w[Field.Codec] ?? 0] ?? 'other',
    onPoolThread: w[Field.OnPoolThread] === 1,
  };
}

/** @internal `ptsMs` is the job's pts output array (ms, -1 where empty). */
export function readVideo(w: Int32Array, ptsMs: Int32Array): DecodedVideoInfo {
  const timestamps = new Float64Array(ptsMs.length);
  ptsMs.forEach((ms, i) => {
    timestamps[i] = ms < 0 ? Number.NaN : ms / 1000;
  });
  return {
    framesWritten: w[Field.FramesOut] ?? 0,
    timestamps,
    sourceWidth: w[Field.SrcW] ?? 0,
    sourceHeight: w[Field.SrcH] ?? 0,
    frameRate: (w[Field.SrcRate] ?? 0) / 1000,
    durationSeconds: duration(w),
    format: MEDIA_FORMAT_NAMES[w[Field.Format] ?? 0] ?? 'unknown',
    codec: CODEC_NAMES[w[Field.Codec] ?? 0] ?? 'other',
    onPoolThread: w[Field.OnPoolThread] === 1,
  };
}

export interface ClipOptions {
  /** Frames between clip starts (default: clipFrames, back to back). */
  hopFrames?: number;
  /** Keep a last, partial clip (its view is shorter) instead of dropping it (default false). */
  keepPartial?: boolean;
}

/**
 * Cuts interleaved samples (`frames` × `channels`) into fixed-length clips of `clipFrames` sample
 * frames: views into `samples`, no copies. Use it on a decodeAudio target with framesWritten.
 */
export function audioClips(
  samples: Float32Array,
  channels: number,
  frames: number,
  clipFrames: number,
  options: ClipOptions = {},
): Float32Array[] {
  const hop = options.hopFrames ?? clipFrames;
  if (!Number.isInteger(clipFrames) || clipFrames < 1 || !Number.isInteger(hop) || hop < 1)
    badRequest('clipFrames and hopFrames must be positive integers');
  if (!Number.isInteger(channels) || channels < 1 || frames * channels > samples.length)
    badRequest('frames × channels exceeds the samples');
  const out: Float32Array[] = [];
  for (let start = 0; start < frames; start += hop) {
    const end = start + clipFrames;
    if (end > frames && !options.keepPartial) break;
    out.push(samples.subarray(start * channels, Math.min(end, frames) * channels));
    if (end >= frames) break;
  }
  return out;
}
