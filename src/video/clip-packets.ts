// A clip's packets read straight from an MP4 through its index (mp4-index.ts): the samples from
// each wanted frame's keyframe to the frame, merged into runs, their byte ranges coalesced into a
// few ranged reads of the file. The decode job then gets only those packets (VideoPackets) and
// opens no container; the rest of the file is never read.
import { DecodeError, PACKET_KEY, PACKET_RUN, type ByteSource, type VideoPackets } from '../decode/index.ts';
import type { Mp4Index } from './mp4-index.ts';
import { lastAtOrBefore } from './samplers.ts';

/** A gap between wanted byte ranges up to this size is read through rather than split into another read. */
const READ_THROUGH_BYTES = 64 << 10;

/**
 * What a video's index gives every clip of it: its samples sorted by own time (µs; equal times in
 * decode order), and each sample's keyframe. Typed arrays, 16 bytes a sample (LOOKUP_BYTES_PER_SAMPLE,
 * which the index cache counts), not a Map of a few times that.
 */
interface Lookup {
  timesUs: Float64Array;
  samples: Int32Array;
  keyBefore: Int32Array;
}
export const LOOKUP_BYTES_PER_SAMPLE = 16;
const lookups = new WeakMap<Mp4Index, Lookup>();

function lookup(index: Mp4Index): Lookup {
  let l = lookups.get(index);
  if (l) return l;
  const n = index.samples;
  const own = new Float64Array(n);
  const keyBefore = new Int32Array(n);
  let key = -1;
  for (let i = 0; i < n; i++) {
    own[i] = Math.round(((index.pts[i] ?? 0) * 1e6) / index.timescale);
    if (index.key[i]) key = i;
    keyBefore[i] = key;
  }
  const samples = Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => (own[a] ?? 0) - (own[b] ?? 0) || a - b);
  const timesUs = Float64Array.from(samples, (i) => own[i] ?? 0);
  l = { timesUs, samples, keyBefore };
  lookups.set(index, l);
  return l;
}

/** The sample shown at `us` (the last in decode order when several are), or undefined. */
function sampleAt(l: Lookup, us: number): number | undefined {
  const i = lastAtOrBefore(l.timesUs, us);
  return i >= 0 && l.timesUs[i] === us ? l.samples[i] : undefined;
}

/**
 * The runs of samples (decode order, inclusive) that decoding the frames shown at `frameTimes`
 * (their own times, s) needs: each frame from its keyframe on, overlapping spans merged. A frame
 * shown before its keyframe (an open GOP's leading frame) starts at the keyframe before that.
 */
export function clipRuns(index: Mp4Index, frameTimes: ArrayLike<number>): Array<[number, number]> {
  const l = lookup(index);
  const { keyBefore } = l;
  const spans: Array<[number, number]> = [];
  for (let i = 0; i < frameTimes.length; i++) {
    const t = frameTimes[i] ?? Number.NaN;
    const sample = sampleAt(l, Math.round(t * 1e6));
    if (sample === undefined) throw new DecodeError('bad-request', `no frame of the video is shown at ${t} s (its own time is needed)`);
    let key = keyBefore[sample] ?? -1;
    while (key > 0 && (index.pts[sample] ?? 0) < (index.pts[key] ?? 0)) key = keyBefore[key - 1] ?? -1;
    if (key < 0) throw new DecodeError('corrupt', `the frame at ${t} s has no keyframe before it in the index`);
    spans.push([key, sample]);
  }
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const runs: Array<[number, number]> = [];
  for (const [from, to] of spans) {
    const last = runs[runs.length - 1];
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else runs.push([from, to]);
  }
  return runs;
}

/**
 * Clips (each by its frames' own times) in groups whose decodes would share frames: a clip joins
 * the first group one of whose runs overlaps one of its own (the same samples would otherwise be
 * decoded twice), while the group has fewer than `maxMembers`. Groups list clip indices in
 * ascending order; a clip that shares nothing is a group of its own.
 */
export function sharingGroups(index: Mp4Index, clips: ReadonlyArray<ArrayLike<number>>, maxMembers: number): number[][] {
  const runsOf = clips.map((times) => clipRuns(index, times));
  const order = Array.from(clips.keys()).sort((a, b) => (runsOf[a]?.[0]?.[0] ?? 0) - (runsOf[b]?.[0]?.[0] ?? 0) || a - b);
  const groups: Array<{ members: number[]; runs: Array<[number, number]> }> = [];
  for (const c of order) {
    const runs = runsOf[c] ?? [];
    const group = groups.find((g) => g.members.length < maxMembers && overlaps(g.runs, runs));
    if (group) {
      group.members.push(c);
      group.runs.push(...runs);
    } else groups.push({ members: [c], runs: [...runs] });
  }
  return groups.map((g) => g.members.sort((a, b) => a - b)).sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0));
}

function overlaps(a: ReadonlyArray<[number, number]>, b: ReadonlyArray<[number, number]>): boolean {
  return a.some(([from, to]) => b.some(([f, t]) => from <= t && f <= to));
}

/** The packets of a clip, read from `source` (the file the index came from). */
export async function readClipPackets(
  source: ByteSource,
  index: Mp4Index,
  frameTimes: ArrayLike<number>,
): Promise<{ packets: VideoPackets; bytesRead: number; reads: number }> {
  const codec = index.codec;
  if (!codec) throw new DecodeError('unknown-format', `no packets road for '${index.sampleEntry}' samples`);
  const runs = clipRuns(index, frameTimes);
  let count = 0;
  for (const [from, to] of runs) count += to - from + 1;
  const samples = new Uint32Array(count);
  const flags = new Uint8Array(count);
  let k = 0;
  for (const [from, to] of runs) {
    for (let s = from; s <= to; s++, k++) {
      samples[k] = s;
      flags[k] = (index.key[s] ? PACKET_KEY : 0) | (s === from && k > 0 ? PACKET_RUN : 0);
    }
  }
  const { data, offsets, bytesRead, reads } = await readSamples(source, index, samples);
  const pick = (values: Float64Array) => Float64Array.from(samples, (s) => values[s] ?? Number.NaN);
  return {
    packets: {
      codec,
      codedWidth: index.codedWidth,
      codedHeight: index.codedHeight,
      ...(index.extradata ? { extradata: index.extradata } : {}),
      durationSeconds: index.durationSeconds,
      frameRate: index.frameRate,
      timescale: index.timescale,
      ...(index.color ? { color: index.color } : {}),
      data,
      offsets,
      sizes: Uint32Array.from(samples, (s) => index.sizes[s] ?? 0),
      pts: pick(index.pts),
      dts: pick(index.dts),
      durations: pick(index.durations),
      flags,
    },
    bytesRead,
    reads,
  };
}

/**
 * The bytes of `samples`, read in file order with small gaps read through (their total kept
 * under half the wanted bytes), into one buffer; `offsets` gives each sample's place in it.
 */
async function readSamples(
  source: ByteSource,
  index: Mp4Index,
  samples: Uint32Array,
): Promise<{ data: Uint8Array; offsets: Uint32Array; bytesRead: number; reads: number }> {
  const byFile = Array.from(samples.keys()).sort((a, b) => (index.offsets[samples[a] ?? 0] ?? 0) - (index.offsets[samples[b] ?? 0] ?? 0));
  let wanted = 0;
  for (const s of samples) wanted += index.sizes[s] ?? 0;
  const ranges: Array<{ start: number; end: number; at: number }> = [];
  let through = 0;
  for (const i of byFile) {
    const s = samples[i] ?? 0;
    const start = index.offsets[s] ?? 0;
    const end = start + (index.sizes[s] ?? 0);
    const last = ranges[ranges.length - 1];
    const gap = last ? start - last.end : Number.POSITIVE_INFINITY;
    if (last && gap <= 0) last.end = Math.max(last.end, end);
    else if (last && gap <= READ_THROUGH_BYTES && through + gap <= wanted / 2) {
      through += gap;
      last.end = end;
    } else ranges.push({ start, end, at: 0 });
  }
  let total = 0;
  for (const r of ranges) {
    r.at = total;
    total += r.end - r.start;
  }
  const data = new Uint8Array(total);
  await Promise.all(
    ranges.map(async (r) => {
      const bytes = await source.read(r.start, r.end - r.start);
      if (bytes.length !== r.end - r.start)
        throw new DecodeError('truncated', `the file ends before the clip's packets (bytes ${r.start}–${r.end} of ${source.size ?? '?'})`);
      data.set(bytes, r.at);
    }),
  );
  const offsets = new Uint32Array(samples.length);
  let r = 0;
  for (const i of byFile) {
    const at = index.offsets[samples[i] ?? 0] ?? 0;
    while ((ranges[r]?.end ?? 0) <= at) r++;
    const range = ranges[r];
    if (!range) throw new DecodeError('corrupt', 'internal: a sample outside the ranges read');
    offsets[i] = range.at + (at - range.start);
  }
  return { data, offsets, bytesRead: total, reads: ranges.length };
}
