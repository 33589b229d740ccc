// A video's timeline and packets from a Matroska or WebM file's own structure, without the
// demuxer: the one video track's codec, size and colour from Tracks, the time scale and duration
// from Info, and every block of the track in the clusters (its time, keyframe flag and the byte
// range of its frame). The file is walked element by element in memory: each element's header
// is read and its payload skipped, except the few that hold these.
//
// The times must be the wasm demuxer's (libavformat's matroska demuxer), so only the plain
// layouts are taken: known element sizes (a live-written file with unknown-size clusters is left
// to the demuxer), no lacing and no content encoding on the video track, one video track, a time
// scale that divides a second evenly. Anything else, and any malformed element, returns undefined:
// the caller scans with the demuxer, which gives the typed error.
import type { PacketCodec } from '../decode/index.ts';
import type { Mp4Index } from './mp4-index.ts';

const ID = {
  ebml: 0x1a45dfa3,
  docType: 0x4282,
  segment: 0x18538067,
  info: 0x1549a966,
  timecodeScale: 0x2ad7b1,
  duration: 0x4489,
  tracks: 0x1654ae6b,
  trackEntry: 0xae,
  trackNumber: 0xd7,
  trackType: 0x83,
  codecId: 0x86,
  codecPrivate: 0x63a2,
  contentEncodings: 0x6d80,
  video: 0xe0,
  pixelWidth: 0xb0,
  pixelHeight: 0xba,
  colour: 0x55b0,
  matrix: 0x55b1,
  range: 0x55b9,
  transfer: 0x55ba,
  primaries: 0x55bb,
  cluster: 0x1f43b675,
  timecode: 0xe7,
  simpleBlock: 0xa3,
  blockGroup: 0xa0,
  block: 0xa1,
  referenceBlock: 0xfb,
} as const;

const CODECS: Record<string, PacketCodec> = {
  'V_MPEG4/ISO/AVC': 'h264',
  'V_MPEGH/ISO/HEVC': 'hevc',
  V_VP9: 'vp9',
  V_VP8: 'vp8',
  V_AV1: 'av1',
};
/** The most blocks read here, on the caller's thread (as mp4-index.ts's MAX_SAMPLES). */
const MAX_BLOCKS = 100_000;

interface Element {
  id: number;
  start: number;
  end: number;
}

class Walker {
  constructor(readonly b: Uint8Array) {}

  /** A variable-length integer at `at`: its value (marker bit kept for IDs), length, and whether it is all ones (unknown size). */
  vint(at: number, keepMarker: boolean): { value: number; length: number; unknown: boolean } | undefined {
    const first = this.b[at];
    if (first === undefined || first === 0) return undefined;
    const length = Math.clz32(first) - 23;
    if (length > 8 || at + length > this.b.length) return undefined;
    let value = keepMarker ? first : first & (0xff >> length);
    let ones = value === 0xff >> length;
    for (let i = 1; i < length; i++) {
      const byte = this.b[at + i] ?? 0;
      value = value * 256 + byte;
      ones &&= byte === 0xff;
    }
    return { value, length, unknown: !keepMarker && ones };
  }

  /** The elements in [from, to); undefined when one is malformed, of unknown size or runs past `to`. */
  children(from: number, to: number): Element[] | undefined {
    const out: Element[] = [];
    for (let at = from; at < to; ) {
      const id = this.vint(at, true);
      const size = id && this.vint(at + id.length, false);
      if (!id || !size || size.unknown || id.length > 4) return undefined;
      const start = at + id.length + size.length;
      const end = start + size.value;
      if (end > to) return undefined;
      out.push({ id: id.value, start, end });
      at = end;
    }
    return out;
  }

  uint(e: Element): number {
    let v = 0;
    for (let i = e.start; i < e.end; i++) v = v * 256 + (this.b[i] ?? 0);
    return v;
  }

  float(e: Element): number {
    const view = new DataView(this.b.buffer, this.b.byteOffset + e.start, e.end - e.start);
    return e.end - e.start === 4 ? view.getFloat32(0) : e.end - e.start === 8 ? view.getFloat64(0) : Number.NaN;
  }

  text(e: Element): string {
    return String.fromCharCode(...this.b.subarray(e.start, e.end)).replace(/\0+$/, '');
  }
}

/** The one video track's blocks and parameters, or undefined where the demuxer must scan (see above). */
export function readMatroskaIndex(bytes: Uint8Array): Mp4Index | undefined {
  const w = new Walker(bytes);
  const top = w.children(0, bytes.length);
  const header = top?.[0];
  if (!top || header?.id !== ID.ebml) return undefined;
  const docType = w.children(header.start, header.end)?.find((e) => e.id === ID.docType);
  if (!docType || !['webm', 'matroska'].includes(w.text(docType))) return undefined;
  const segment = top.find((e) => e.id === ID.segment);
  const inSegment = segment && w.children(segment.start, segment.end);
  if (!inSegment) return undefined;

  const info = inSegment.find((e) => e.id === ID.info);
  const infoItems = (info && w.children(info.start, info.end)) ?? [];
  const scaleElement = infoItems.find((e) => e.id === ID.timecodeScale);
  const timecodeScale = scaleElement ? w.uint(scaleElement) : 1_000_000;
  if (!(timecodeScale > 0) || 1e9 % timecodeScale !== 0) return undefined;
  const durationElement = infoItems.find((e) => e.id === ID.duration);
  const duration = durationElement ? w.float(durationElement) : Number.NaN;
  if (!(duration > 0)) return undefined;

  const tracks = inSegment.find((e) => e.id === ID.tracks);
  const entries = ((tracks && w.children(tracks.start, tracks.end)) ?? []).filter((e) => e.id === ID.trackEntry);
  const videos = entries.map((e) => w.children(e.start, e.end)).filter((t) => t && t.some((x) => x.id === ID.trackType && w.uint(x) === 1));
  const track = videos.length === 1 ? videos[0] : undefined;
  if (!track || track.some((x) => x.id === ID.contentEncodings)) return undefined;
  const field = (id: number) => track.find((x) => x.id === id);
  const numberElement = field(ID.trackNumber);
  const codecElement = field(ID.codecId);
  const videoElement = field(ID.video);
  if (!numberElement || !codecElement || !videoElement) return undefined;
  const trackNumber = w.uint(numberElement);
  const codecId = w.text(codecElement);
  const picture = w.children(videoElement.start, videoElement.end) ?? [];
  const width = picture.find((x) => x.id === ID.pixelWidth);
  const height = picture.find((x) => x.id === ID.pixelHeight);
  if (!width || !height) return undefined;
  const colourElement = picture.find((x) => x.id === ID.colour);
  const privateElement = field(ID.codecPrivate);

  // The blocks of the track, in file (decode) order.
  const pts: number[] = [];
  const offsets: number[] = [];
  const sizes: number[] = [];
  const key: number[] = [];
  for (const cluster of inSegment) {
    if (cluster.id !== ID.cluster) continue;
    const items = w.children(cluster.start, cluster.end);
    const timecodeElement = items?.find((e) => e.id === ID.timecode);
    if (!items || !timecodeElement) return undefined;
    const clusterTime = w.uint(timecodeElement);
    for (const item of items) {
      let block: Element | undefined;
      let keyframe: boolean;
      if (item.id === ID.simpleBlock) {
        block = item;
        keyframe = ((bytes[block.start + (w.vint(block.start, false)?.length ?? 0) + 2] ?? 0) & 0x80) !== 0;
      } else if (item.id === ID.blockGroup) {
        const group = w.children(item.start, item.end);
        block = group?.find((e) => e.id === ID.block);
        keyframe = !group?.some((e) => e.id === ID.referenceBlock);
      } else continue;
      if (!block) return undefined;
      const number = w.vint(block.start, false);
      if (!number) return undefined;
      if (number.value !== trackNumber) continue;
      const at = block.start + number.length;
      const flags = bytes[at + 2] ?? 0;
      if (flags & 0x06 || at + 3 >= block.end) return undefined; // laced, or no frame
      const relative = (((bytes[at] ?? 0) << 24) >> 16) | (bytes[at + 1] ?? 0);
      pts.push(clusterTime + relative);
      offsets.push(at + 3);
      sizes.push(block.end - at - 3);
      key.push(keyframe ? 1 : 0);
      if (pts.length > MAX_BLOCKS) return undefined;
    }
  }
  const count = pts.length;
  if (count === 0 || !key[0]) return undefined;
  // The demuxer's stream start is its first packet's time (in file order), not the earliest: a
  // block shown before it has a negative time, as the demuxer gives it.
  const start = pts[0] ?? 0;
  const timescale = 1e9 / timecodeScale;
  const ptsFromStart = Float64Array.from(pts, (t) => t - start);
  const frameTimes = ptsFromStart.map((t) => Math.round((t * 1e6) / timescale) / 1e6).sort();
  // Each block lasts until the next frame shown, the last one as long as the one before it.
  const durations = new Float64Array(count);
  const shown = Float64Array.from(ptsFromStart).sort();
  const next = new Map<number, number>();
  for (let i = 0; i + 1 < count; i++) next.set(shown[i] ?? 0, (shown[i + 1] ?? 0) - (shown[i] ?? 0));
  const last = count > 1 ? (shown[count - 1] ?? 0) - (shown[count - 2] ?? 0) : 0;
  for (let i = 0; i < count; i++) durations[i] = next.get(ptsFromStart[i] ?? 0) ?? last;
  const mediaSeconds = (duration * timecodeScale) / 1e9;
  const colour = colourElement && (w.children(colourElement.start, colourElement.end) ?? []);
  const tag = (id: number, unspecified: number) => {
    const e = colour?.find((x) => x.id === id);
    const v = e ? w.uint(e) : unspecified;
    return v <= 255 ? v : unspecified;
  };
  return {
    sampleEntry: codecId,
    codedWidth: w.uint(width),
    codedHeight: w.uint(height),
    // The demuxer's duration: Duration × TimecodeScale ns, truncated to µs, then to whole ms.
    durationSeconds: Math.floor(Math.trunc((duration * timecodeScale) / 1000) / 1000) / 1000,
    frameTimes,
    samples: count,
    keyframes: key.reduce((n, k) => n + k, 0),
    codec: CODECS[codecId],
    extradata: privateElement ? bytes.slice(privateElement.start, privateElement.end) : undefined,
    color: colour
      ? { space: tag(ID.matrix, 2), range: tag(ID.range, 0), primaries: tag(ID.primaries, 2), transfer: tag(ID.transfer, 2) }
      : undefined,
    frameRate: mediaSeconds > 0 ? count / mediaSeconds : 0,
    timescale,
    pts: ptsFromStart,
    dts: new Float64Array(count).fill(Number.NaN),
    durations,
    offsets: Float64Array.from(offsets),
    sizes: Uint32Array.from(sizes),
    key: Uint8Array.from(key),
    indexBytes: bytes.length,
  };
}
