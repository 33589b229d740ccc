// A video's timeline and packets from a Matroska or WebM file's own structure, without the
// demuxer: the one video track's codec, size and colour from Tracks, the time scale and duration
// from Info, and every block of the track in the clusters (its time, keyframe flag and the byte
// range of its frame). The file is walked forward element by element through a ByteSource: each
// element's header is read and its payload skipped, except the few that hold these (Info, Tracks,
// a cluster's Timecode, the first bytes of each block). Matroska has no index of every frame (its
// Cues name keyframes only), so every block header is visited: over a file in memory that is a
// walk; through ranged reads, a read per header where frames are large, else the file read through
// in large windows (the loader reads a small file whole instead, loader.ts).
//
// The times must be the wasm demuxer's (libavformat's matroska demuxer), so only the plain
// layouts are taken: known element sizes (a live-written file with unknown-size clusters is left
// to the demuxer), a cluster's Timecode before its blocks, no lacing and no content encoding on the
// video track, one video track, a time scale that divides a second evenly. Anything else, and any
// malformed element, returns undefined: the caller scans with the demuxer, which gives the typed
// error.
import type { ByteSource, PacketCodec } from '../decode/index.ts';
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
/** The most blocks of every track walked past (audio, subtitles): a file of countless tiny ones goes to the demuxer. */
const MAX_WALKED_BLOCKS = 1_000_000;
/**
 * The most elements of any kind walked (Void and CRC elements take 2 bytes, and empty clusters
 * hold no block): past it the file goes to the demuxer. Every ELEMENTS_PER_TURN the walk waits for
 * a macrotask, so a walk inside one window leaves the event loop its timers and I/O.
 */
const MAX_WALKED_ELEMENTS = 4 * MAX_WALKED_BLOCKS;
const ELEMENTS_PER_TURN = 1 << 16;
/** Header elements (EBML header, Info, Tracks) are read whole; larger ones are left to the demuxer. */
const MAX_HEADER_ELEMENT_BYTES = 1 << 20;
/** An element's ID and size take at most 4 + 8 bytes; a block's track number, time and flags 8 + 3 more. */
const ELEMENT_HEAD_BYTES = 12;
const BLOCK_HEAD_BYTES = 11;

interface Element {
  id: number;
  start: number;
  end: number;
}

/** A variable-length integer at `at`: its value (marker bit kept for IDs), length, and whether it is all ones (unknown size). */
function vint(b: Uint8Array, at: number, keepMarker: boolean): { value: number; length: number; unknown: boolean } | undefined {
  const first = b[at];
  if (first === undefined || first === 0) return undefined;
  const length = Math.clz32(first) - 23;
  if (length > 8 || at + length > b.length) return undefined;
  let value = keepMarker ? first : first & (0xff >> length);
  let ones = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    const byte = b[at + i] ?? 0;
    value = value * 256 + byte;
    ones &&= byte === 0xff;
  }
  return { value, length, unknown: !keepMarker && ones };
}

/** An element's ID and payload bounds from its header at `at` of `b`; undefined when malformed or of unknown size. */
function header(b: Uint8Array, at: number): { id: number; start: number; size: number } | undefined {
  const id = vint(b, at, true);
  const size = id && vint(b, at + id.length, false);
  if (!id || !size || size.unknown || id.length > 4) return undefined;
  return { id: id.value, start: at + id.length + size.length, size: size.value };
}

/** Parses the payload of a header element held whole in memory (positions relative to it). */
class Walker {
  constructor(readonly b: Uint8Array) {}

  /** The elements in [from, to); undefined when one is malformed, of unknown size or runs past `to`. */
  children(from: number, to: number): Element[] | undefined {
    const out: Element[] = [];
    for (let at = from; at < to; ) {
      const h = header(this.b, at);
      if (!h || h.start + h.size > to) return undefined;
      out.push({ id: h.id, start: h.start, end: h.start + h.size });
      at = h.start + h.size;
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

/**
 * A read costs about as much as 64 KB more of it (about 50 µs a read from a local file against
 * about 1.5 GB/s: bench/matroska-reads.ts, 1776 reads of 64 bytes in 85 ms, 6.5 MB in 4.1 ms):
 * frames larger than this on average are skipped, each header read alone; smaller ones are read
 * through in large windows.
 */
const LARGE_FRAME_BYTES = 64 << 10;
const SKIPPING_READ_AHEAD = 64;
const STREAMING_READ_AHEAD = 1 << 20;
/** Before the first block: the header elements and the first cluster's start. */
const FIRST_READ_AHEAD = 64 << 10;

/**
 * Forward reads of a ByteSource: a request returns bytes from the window last read when they lie
 * in it, else reads a new window from there: `readAhead` bytes (or the request, if longer), or
 * with 'adaptive' as many as the blocks seen so far make quickest (see LARGE_FRAME_BYTES).
 */
class Cursor {
  #window: Uint8Array = new Uint8Array(0);
  #base = 0;
  #blocks = 0;
  #blockBytes = 0;
  #elements = 0;
  bytesRead = 0;

  constructor(
    private readonly source: ByteSource,
    readonly size: number,
    private readonly readAhead: number | 'adaptive',
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** Counts a block of any track, for the adaptive read-ahead; false past MAX_WALKED_BLOCKS. */
  sawBlock(bytes: number): boolean {
    this.#blocks++;
    this.#blockBytes += bytes;
    return this.#blocks <= MAX_WALKED_BLOCKS;
  }

  #ahead(): number {
    if (this.readAhead !== 'adaptive') return this.readAhead;
    if (this.#blocks === 0) return FIRST_READ_AHEAD;
    return this.#blockBytes / this.#blocks >= LARGE_FRAME_BYTES ? SKIPPING_READ_AHEAD : STREAMING_READ_AHEAD;
  }

  /** Bytes [at, at + n), fewer at the end of the file. */
  async get(at: number, n: number): Promise<Uint8Array> {
    const wanted = Math.max(0, Math.min(n, this.size - at));
    if (wanted === 0) return new Uint8Array(0);
    const from = at - this.#base;
    if (from < 0 || from + wanted > this.#window.length) {
      this.#window = await this.source.read(at, Math.min(this.size - at, Math.max(wanted, this.#ahead())));
      this.#base = at;
      this.bytesRead += this.#window.length;
      return this.#window.subarray(0, wanted);
    }
    return this.#window.subarray(from, from + wanted);
  }

  /** The element whose header starts at `at`, inside a parent ending at `limit`. */
  async element(at: number, limit: number): Promise<Element | undefined> {
    if (++this.#elements > MAX_WALKED_ELEMENTS) return undefined;
    if (this.#elements % ELEMENTS_PER_TURN === 0) await new Promise((resolve) => setTimeout(resolve, 0));
    this.signal?.throwIfAborted();
    const h = header(await this.get(at, Math.min(ELEMENT_HEAD_BYTES, limit - at)), 0);
    if (!h) return undefined;
    const start = at + h.start;
    const end = start + h.size;
    return end <= limit ? { id: h.id, start, end } : undefined;
  }

  /** A header element's payload, whole, for a Walker. */
  async payload(e: Element): Promise<Walker | undefined> {
    if (e.end - e.start > MAX_HEADER_ELEMENT_BYTES) return undefined;
    const bytes = await this.get(e.start, e.end - e.start);
    return bytes.length === e.end - e.start ? new Walker(bytes) : undefined;
  }
}

/** The video track's parameters, read from Info and Tracks before the first cluster. */
interface TrackHeader {
  trackNumber: number;
  codecId: string;
  width: number;
  height: number;
  timecodeScale: number;
  duration: number;
  extradata: Uint8Array | undefined;
  color: Mp4Index['color'];
}

export interface MatroskaReadOptions {
  /**
   * Bytes read from each element header that lies past the bytes read so far (default: the rest
   * of the file, for bytes in memory); 'adaptive': header by header over frames larger than
   * LARGE_FRAME_BYTES on average, in 1 MiB windows over smaller ones.
   */
  readAhead?: number | 'adaptive';
  /** Stops the walk: the read rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * The one video track's blocks and parameters, or undefined where the demuxer must scan (see
 * above). Never throws for malformed bytes; a failing read rejects.
 */
export async function readMatroskaIndex(source: ByteSource, options: MatroskaReadOptions = {}): Promise<Mp4Index | undefined> {
  const size = source.size;
  if (size === undefined) return undefined;
  const c = new Cursor(source, size, options.readAhead ?? size, options.signal);
  const ebml = await c.element(0, size);
  if (ebml?.id !== ID.ebml) return undefined;
  const ebmlBody = await c.payload(ebml);
  const docType = ebmlBody?.children(0, ebmlBody.b.length)?.find((e) => e.id === ID.docType);
  if (!ebmlBody || !docType || !['webm', 'matroska'].includes(ebmlBody.text(docType))) return undefined;
  const segment = await c.element(ebml.end, size);
  if (segment?.id !== ID.segment) return undefined;

  // Info and Tracks come before the clusters in every writer's layout; the track is read at the first cluster.
  let info: Walker | undefined;
  let tracks: Walker | undefined;
  let track: TrackHeader | undefined;
  const blocks: Blocks = { pts: [], offsets: [], sizes: [], key: [] };
  for (let at = segment.start; at < segment.end; ) {
    const e = await c.element(at, segment.end);
    if (!e) return undefined;
    at = e.end;
    if (e.id === ID.info && !track) info = await c.payload(e);
    else if (e.id === ID.tracks && !track) tracks = await c.payload(e);
    else if (e.id === ID.cluster) {
      track ??= info && tracks && videoTrack(info, tracks);
      if (!track || !(await readCluster(c, e, track.trackNumber, blocks))) return undefined;
    }
  }
  return track && indexOf(track, blocks, c.bytesRead);
}

/** Info's time scale and duration and the one video track's entry; undefined where they do not qualify. */
function videoTrack(info: Walker, tracks: Walker): TrackHeader | undefined {
  const infoItems = info.children(0, info.b.length) ?? [];
  const scaleElement = infoItems.find((e) => e.id === ID.timecodeScale);
  const timecodeScale = scaleElement ? info.uint(scaleElement) : 1_000_000;
  if (!(timecodeScale > 0) || 1e9 % timecodeScale !== 0) return undefined;
  const durationElement = infoItems.find((e) => e.id === ID.duration);
  const duration = durationElement ? info.float(durationElement) : Number.NaN;
  if (!(duration > 0)) return undefined;

  const w = tracks;
  const entries = (w.children(0, w.b.length) ?? []).filter((e) => e.id === ID.trackEntry);
  const videos = entries.map((e) => w.children(e.start, e.end)).filter((t) => t && t.some((x) => x.id === ID.trackType && w.uint(x) === 1));
  const entry = videos.length === 1 ? videos[0] : undefined;
  if (!entry || entry.some((x) => x.id === ID.contentEncodings)) return undefined;
  const field = (id: number) => entry.find((x) => x.id === id);
  const numberElement = field(ID.trackNumber);
  const codecElement = field(ID.codecId);
  const videoElement = field(ID.video);
  if (!numberElement || !codecElement || !videoElement) return undefined;
  const picture = w.children(videoElement.start, videoElement.end) ?? [];
  const width = picture.find((x) => x.id === ID.pixelWidth);
  const height = picture.find((x) => x.id === ID.pixelHeight);
  if (!width || !height) return undefined;
  const colourElement = picture.find((x) => x.id === ID.colour);
  const colour = colourElement && (w.children(colourElement.start, colourElement.end) ?? []);
  const tag = (id: number, unspecified: number) => {
    const e = colour?.find((x) => x.id === id);
    const v = e ? w.uint(e) : unspecified;
    return v <= 255 ? v : unspecified;
  };
  const privateElement = field(ID.codecPrivate);
  return {
    trackNumber: w.uint(numberElement),
    codecId: w.text(codecElement),
    width: w.uint(width),
    height: w.uint(height),
    timecodeScale,
    duration,
    extradata: privateElement ? w.b.slice(privateElement.start, privateElement.end) : undefined,
    color: colour
      ? { space: tag(ID.matrix, 2), range: tag(ID.range, 0), primaries: tag(ID.primaries, 2), transfer: tag(ID.transfer, 2) }
      : undefined,
  };
}

/** The track's blocks in file (decode) order: time in the cluster's units, frame offset and size, keyframe. */
interface Blocks {
  pts: number[];
  offsets: number[];
  sizes: number[];
  key: number[];
}

/** Adds a cluster's blocks of the track; false where the cluster does not qualify (see above). */
async function readCluster(c: Cursor, cluster: Element, trackNumber: number, out: Blocks): Promise<boolean> {
  let clusterTime: number | undefined;
  for (let at = cluster.start; at < cluster.end; ) {
    const item = await c.element(at, cluster.end);
    if (!item) return false;
    at = item.end;
    let block: Element | undefined;
    let keyframe = false;
    if (item.id === ID.timecode) {
      const time = await c.payload(item);
      if (!time) return false;
      clusterTime = time.uint({ id: item.id, start: 0, end: time.b.length });
      continue;
    }
    if (item.id === ID.simpleBlock) block = item;
    else if (item.id === ID.blockGroup) {
      for (let g = item.start; g < item.end; ) {
        const e = await c.element(g, item.end);
        if (!e) return false;
        g = e.end;
        if (e.id === ID.block) block = e;
        keyframe ||= e.id === ID.referenceBlock;
      }
      keyframe = !keyframe;
    } else continue;
    if (!block || !c.sawBlock(block.end - block.start)) return false;
    const head = await c.get(block.start, Math.min(BLOCK_HEAD_BYTES, block.end - block.start));
    const number = vint(head, 0, false);
    if (!number) return false;
    if (number.value !== trackNumber) continue;
    const at3 = number.length;
    const flags = head[at3 + 2] ?? 0;
    if (clusterTime === undefined || flags & 0x06 || block.start + at3 + 3 >= block.end) return false; // laced, or no frame
    if (item.id === ID.simpleBlock) keyframe = (flags & 0x80) !== 0;
    const relative = (((head[at3] ?? 0) << 24) >> 16) | (head[at3 + 1] ?? 0);
    out.pts.push(clusterTime + relative);
    out.offsets.push(block.start + at3 + 3);
    out.sizes.push(block.end - block.start - at3 - 3);
    out.key.push(keyframe ? 1 : 0);
    if (out.pts.length > MAX_BLOCKS) return false;
  }
  return true;
}

/** The index of the track's blocks: times from the stream's start, each block's duration, the demuxer's duration. */
function indexOf(track: TrackHeader, blocks: Blocks, indexBytes: number): Mp4Index | undefined {
  const { pts, offsets, sizes, key } = blocks;
  const count = pts.length;
  if (count === 0 || !key[0]) return undefined;
  // The demuxer's stream start is its first packet's time (in file order), not the earliest: a
  // block shown before it has a negative time, as the demuxer gives it.
  const start = pts[0] ?? 0;
  const timescale = 1e9 / track.timecodeScale;
  const ptsFromStart = Float64Array.from(pts, (t) => t - start);
  const frameTimes = ptsFromStart.map((t) => Math.round((t * 1e6) / timescale) / 1e6).sort();
  // Each block lasts until the next frame shown, the last one as long as the one before it.
  const durations = new Float64Array(count);
  const shown = Float64Array.from(ptsFromStart).sort();
  const next = new Map<number, number>();
  for (let i = 0; i + 1 < count; i++) next.set(shown[i] ?? 0, (shown[i + 1] ?? 0) - (shown[i] ?? 0));
  const last = count > 1 ? (shown[count - 1] ?? 0) - (shown[count - 2] ?? 0) : 0;
  for (let i = 0; i < count; i++) durations[i] = next.get(ptsFromStart[i] ?? 0) ?? last;
  const { duration, timecodeScale } = track;
  const mediaSeconds = (duration * timecodeScale) / 1e9;
  return {
    sampleEntry: track.codecId,
    codedWidth: track.width,
    codedHeight: track.height,
    // The demuxer's duration: Duration × TimecodeScale ns, truncated to µs, then to whole ms.
    durationSeconds: Math.floor(Math.trunc((duration * timecodeScale) / 1000) / 1000) / 1000,
    frameTimes,
    samples: count,
    keyframes: key.reduce((n, k) => n + k, 0),
    codec: CODECS[track.codecId],
    extradata: track.extradata,
    color: track.color,
    frameRate: mediaSeconds > 0 ? count / mediaSeconds : 0,
    timescale,
    pts: ptsFromStart,
    dts: new Float64Array(count).fill(Number.NaN),
    durations,
    offsets: Float64Array.from(offsets),
    sizes: Uint32Array.from(sizes),
    key: Uint8Array.from(key),
    indexBytes,
  };
}
