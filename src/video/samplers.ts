// Which frames of a video make its clips: the video counterpart of the random crop. Random starts
// are drawn from (seed, epoch, key) as the crop's are, so a run is reproducible, each epoch draws
// anew, and one video's draws never depend on which videos came before it.
//
// Definitions (docs/video.md, "Clip samplers", says the same with examples):
// - Index mode (`stride`, default 1): slot j of a clip starting at frame s holds frame s + j·stride.
//   A clip spans (F−1)·stride + 1 frames; the valid starts are 0 … n − span (n frames).
// - Time mode (`fps`): slot j holds the frame shown at t_j = s + j/fps, i.e. the last frame whose
//   pts ≤ t_j (within SAMPLE_TIME_TOLERANCE). The video runs from the first frame's pts to `end`:
//   the duration when it is known and past the last pts, else the last frame's pts. A clip spans
//   (F−1)/fps seconds; the valid starts are first pts … end − span, and t is inside while t ≤ end.
// - Slots past the end (a video shorter than a clip, or the tail clip of `'all'`) follow the
//   policy: 'repeat-last' holds the last frame; 'wrap' starts the clip's own in-video slots over
//   (slot j takes slot j mod validSlots); 'error' never pads: a video shorter than one clip is a
//   ClipSamplingError `video-too-short`, and `'all'` leaves the uncovered tail out.
import { OptionChecker } from '../errors/index.ts';
import { Rng, hash3, mix32 } from '../random/index.ts';
import { ClipSamplingError } from './errors.ts';

/** A video's frames as the demuxer gives them: pts in seconds, ascending, from the stream's start. */
export interface VideoTimeline {
  frameTimes: Float64Array;
  /** The stream's duration in seconds; NaN when unknown. */
  durationSeconds: number;
}

export interface ClipShape {
  /** Slots per clip, 1 … MAX_FRAMES_PER_CLIP. */
  framesPerClip: number;
  /** Index mode: frames `stride` apart in presentation order (default 1). */
  stride?: number;
  /** Time mode instead: samples 1/fps seconds apart, each the frame shown at that time. */
  fps?: number;
}

export type ClipSampler =
  /** `clips` starts drawn uniformly over the valid range, with replacement, returned in time order. */
  | { kind: 'random'; clips: number }
  /** `clips` starts evenly spread: the first at the first valid start, the last at the last (N > 1); N = 1 starts at the first. */
  | { kind: 'uniform'; clips: number }
  /** Every clip once, for evaluation: starts 0, hop, 2·hop … (frames, or seconds in time mode); default hop F·stride or F/fps, back to back. */
  | { kind: 'all'; hop?: number };

export type PastEndPolicy = 'repeat-last' | 'wrap' | 'error';

export interface SampledClip {
  /** Presentation-order frame index of each slot. */
  frameIndices: Int32Array;
  /** Presentation time (s) of the frame in each slot: the frame's own pts. */
  frameTimes: Float64Array;
  /** Time mode: the time each slot was looked up at (asked, or wrapped by 'wrap'); index mode: the same array as frameTimes. */
  sampleTimes: Float64Array;
  /** Slots 0 … validSlots − 1 lie inside the video; later ones were filled by the policy. */
  validSlots: number;
  /** The first slot's sample time and the last in-video slot's: the stretch of the video the clip covers. */
  startSeconds: number;
  endSeconds: number;
  /** Position in the returned list. */
  clipIndex: number;
}

export interface ClipDraw {
  seed: number;
  epoch: number;
  /** The item's identity (its key in the source), hashed as the random crop hashes it. */
  key: string;
}

export const MAX_FRAMES_PER_CLIP = 65536;
export const MAX_CLIPS = 65536;
/** Clips × framesPerClip of one call: 4 Mi slots, 80 MiB of returned arrays. */
export const MAX_CLIP_SLOTS = 1 << 22;
/** A sample time within this of a frame's pts shows that frame: sample grids land on frame grids despite rounding. */
export const SAMPLE_TIME_TOLERANCE = 1e-6;
const MAX_STRIDE = 1 << 20,
  MAX_FPS = 100000;
const SALT_CLIPS = 0x636c6970;

/** The clips of one video. Checks every option first (OptionError); a video that cannot give them is a ClipSamplingError. */
export function sampleClips(
  timeline: VideoTimeline,
  shape: ClipShape,
  sampler: ClipSampler,
  draw: ClipDraw,
  policy: PastEndPolicy = 'repeat-last',
): SampledClip[] {
  const s = new OptionChecker('sampleClips shape', shape, ['framesPerClip', 'stride', 'fps']);
  const framesPerClip = s.integer('framesPerClip', 0, 1, MAX_FRAMES_PER_CLIP);
  if (s.raw('stride') !== undefined && s.raw('fps') !== undefined)
    s.fail('fps', 'left out when stride is given (index or time mode, not both)');
  const stride = s.integer('stride', 1, 1, MAX_STRIDE);
  const fps = s.raw('fps') === undefined ? undefined : positive(s, 'fps', 0, MAX_FPS);
  const kind = (sampler as { kind?: unknown } | undefined)?.kind;
  const c = new OptionChecker('sampleClips sampler', sampler, kind === 'all' ? ['kind', 'hop'] : ['kind', 'clips']);
  if (kind === undefined) c.fail('kind', "one of 'random', 'uniform', 'all'");
  c.oneOf('kind', 'random', ['random', 'uniform', 'all']);
  const clips = kind === 'all' ? 0 : c.integer('clips', 0, 1, MAX_CLIPS);
  const hop = kind !== 'all' || c.raw('hop') === undefined ? undefined : fps ? positive(c, 'hop', 0, 1e9) : c.integer('hop', 1, 1, 1 << 30);
  if (clips * framesPerClip > MAX_CLIP_SLOTS)
    c.fail('clips', `at most ${Math.floor(MAX_CLIP_SLOTS / framesPerClip)} for ${framesPerClip} frames per clip`);
  const d = new OptionChecker('sampleClips draw', draw, ['seed', 'epoch', 'key']);
  const seed = d.integer('seed', 0, -(2 ** 31), 2 ** 32 - 1);
  const epoch = d.integer('epoch', 0, 0);
  const key = typeof d.raw('key') === 'string' ? (d.raw('key') as string) : d.fail('key', 'a string');
  const pol = new OptionChecker('sampleClips', { policy }, ['policy']).oneOf('policy', 'repeat-last', ['repeat-last', 'wrap', 'error']);

  const times = checkedTimes(timeline);
  const n = times.length;
  const lastPts = times[n - 1] ?? 0;
  const duration = timeline.durationSeconds;
  // Positions are frame indices (index mode) or seconds (time mode); `end` is the last position inside.
  const first = fps ? (times[0] ?? 0) : 0;
  const end = fps ? (duration > lastPts ? duration : lastPts) : n - 1;
  const step = fps ? 1 / fps : stride;
  const span = (framesPerClip - 1) * step;
  const tolerance = fps ? SAMPLE_TIME_TOLERANCE : 0;
  const lastStart = end - span;
  const short = lastStart < first - tolerance;
  if (short && pol === 'error')
    throw new ClipSamplingError(
      'video-too-short',
      `sampleClips: a clip spans ${describeSpan(span, fps)} but the video holds ${describeSpan(end - first, fps)}`,
    );
  const range = short ? 0 : Math.max(0, lastStart - first);

  let starts: Float64Array;
  if (kind === 'all') {
    const h = hop ?? framesPerClip * step;
    const fitting = Math.floor((range + tolerance) / h) + 1;
    const lastFit = first + (fitting - 1) * h;
    const next = first + fitting * h;
    const tail = pol !== 'error' && next <= end + tolerance && lastFit + span < end - tolerance ? 1 : 0;
    const count = fitting + tail;
    if (count * framesPerClip > MAX_CLIP_SLOTS)
      throw new ClipSamplingError(
        'too-many-clips',
        `sampleClips: ${count} clips of ${framesPerClip} frames exceed ${MAX_CLIP_SLOTS} slots; raise hop`,
      );
    starts = new Float64Array(count);
    for (let k = 0; k < count; k++) starts[k] = first + k * h;
  } else if (kind === 'uniform') {
    starts = new Float64Array(clips);
    for (let k = 0; k < clips; k++) {
      const offset = clips === 1 ? 0 : (k * range) / (clips - 1);
      starts[k] = first + (fps ? offset : Math.round(offset));
    }
  } else {
    const rng = new Rng(hash3(mix32((seed >>> 0) ^ keyHash(key)), epoch, SALT_CLIPS));
    starts = new Float64Array(clips);
    for (let k = 0; k < clips; k++) starts[k] = first + (fps ? rng.float() * range : rng.int(range + 1));
    starts.sort();
  }

  const out: SampledClip[] = new Array(starts.length);
  for (let k = 0; k < starts.length; k++)
    out[k] = fillClip(times, starts[k] ?? 0, framesPerClip, step, end + tolerance, fps !== undefined, pol, k);
  return out;
}

/** FNV-1a over the key's UTF-16 code units, as ImageBatcher hashes a key for its random crop. */
export function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** In ascending `sorted`, the index of the last value ≤ `limit` (the last of equal ones), or -1. */
export function lastAtOrBefore(sorted: ArrayLike<number>, limit: number): number {
  let lo = 0,
    hi = sorted.length; // first index whose value > limit lies in [lo, hi]
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] ?? 0) <= limit) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** Index of the frame shown at time t: the last with pts ≤ t + tolerance (the first frame before it). */
export function frameAt(times: Float64Array, t: number): number {
  return Math.max(0, lastAtOrBefore(times, t + SAMPLE_TIME_TOLERANCE));
}

function fillClip(
  times: Float64Array,
  start: number,
  frames: number,
  step: number,
  inside: number,
  timeMode: boolean,
  policy: PastEndPolicy,
  clipIndex: number,
): SampledClip {
  const frameIndices = new Int32Array(frames);
  const frameTimes = new Float64Array(frames);
  const sampleTimes = timeMode ? new Float64Array(frames) : frameTimes;
  const last = times.length - 1;
  const lastPts = times[last] ?? 0;
  let valid = 0;
  for (let j = 0; j < frames; j++) {
    const position = start + j * step;
    if (position <= inside) {
      const index = timeMode ? frameAt(times, position) : position;
      valid = j + 1;
      frameIndices[j] = index;
      frameTimes[j] = times[index] ?? 0;
      if (timeMode) sampleTimes[j] = position;
    } else if (policy === 'wrap') {
      const from = j % valid;
      frameIndices[j] = frameIndices[from] ?? 0;
      frameTimes[j] = frameTimes[from] ?? 0;
      if (timeMode) sampleTimes[j] = sampleTimes[from] ?? 0;
    } else {
      frameIndices[j] = last;
      frameTimes[j] = lastPts;
      if (timeMode) sampleTimes[j] = position;
    }
  }
  return {
    frameIndices,
    frameTimes,
    sampleTimes,
    validSlots: valid,
    startSeconds: sampleTimes[0] ?? 0,
    endSeconds: sampleTimes[valid - 1] ?? 0,
    clipIndex,
  };
}

function checkedTimes(timeline: VideoTimeline): Float64Array {
  const times = (timeline as { frameTimes?: unknown } | undefined)?.frameTimes;
  if (!(times instanceof Float64Array))
    throw new ClipSamplingError('bad-timeline', 'sampleClips: timeline.frameTimes must be a Float64Array');
  if (times.length === 0) throw new ClipSamplingError('empty-timeline', 'sampleClips: the video has no frames');
  if (times.length > 0x7fffffff) throw new ClipSamplingError('bad-timeline', 'sampleClips: more frames than an Int32Array indexes');
  let previous = -Infinity;
  for (let i = 0; i < times.length; i++) {
    const t = times[i] ?? Number.NaN;
    if (!Number.isFinite(t) || t < previous)
      throw new ClipSamplingError('bad-timeline', `sampleClips: frame ${i}'s time ${t} is not finite or comes before the previous frame's`);
    previous = t;
  }
  const duration = timeline.durationSeconds;
  if (!Number.isNaN(duration) && !(Number.isFinite(duration) && duration >= 0))
    throw new ClipSamplingError('bad-timeline', `sampleClips: durationSeconds must be NaN or a finite number ≥ 0 (got ${duration})`);
  return times;
}

/** A finite number in (above, max]. */
function positive(checker: OptionChecker, field: string, above: number, max: number): number {
  const v = checker.raw(field);
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= above || v > max) checker.fail(field, `a number in (${above}, ${max}]`);
  return v;
}

function describeSpan(span: number, fps: number | undefined): string {
  return fps ? `${span.toFixed(3)} s` : `${span + 1} frames`;
}
