// A video's timeline and packets from an MP4's sample tables, without demuxing: the `moov` box's
// video track gives every sample's decode time (stts), composition offset (ctts), keyframe flag
// (stss), size (stsz) and file offset (stsc + stco/co64). The loader's sample stage reads the
// presentation times here for the clip sampler, and cuts each clip's packets by their byte ranges
// (clip-packets.ts), so a clip reads its own GOPs and the decode job opens no container.
//
// The times must be the wasm demuxer's (libavformat's mov demuxer) to the microsecond, so only the
// layouts whose times that demuxer gives plainly are taken: no edit list, or one edit starting
// the media at M ≥ 0 at rate 1 with no frame shown before M (the shift encoders write for
// B-frames), a movie duration in `mvhd`, one sample description. Anything else (fragmented
// files, empty or several edits, frames cut by an edit, `stz2`) returns undefined and the caller
// scans with the demuxer, as it did before. Malformed boxes return undefined too: the demuxer
// then gives the typed error.
import type { ByteSource, PacketCodec } from '../decode/index.ts';

/** What the clip sampler and the crop draw need, read from the index. */
export interface Mp4Timeline {
  /** The sample entry's four-character code: 'avc1', 'hvc1', 'vp09', 'av01', … */
  sampleEntry: string;
  codedWidth: number;
  codedHeight: number;
  /** The movie's duration as the demuxer states it: whole milliseconds, in seconds. */
  durationSeconds: number;
  /** Presentation times in seconds from the stream's start, ascending. */
  frameTimes: Float64Array;
  samples: number;
  keyframes: number;
}

/** The timeline and, per sample in decode order, what a packets job needs (VideoPackets). */
export interface Mp4Index extends Mp4Timeline {
  /** The decoder a packets job uses for the sample entry; undefined where only the demuxer's road can decode it. */
  codec: PacketCodec | undefined;
  /** The sample entry's codec configuration (`avcC`'s or `hvcC`'s payload), as the demuxer hands it to the decoder. */
  extradata: Uint8Array | undefined;
  /** The `colr` box's tags as libavcodec's enum values; undefined without one. */
  color: { space: number; range: number; primaries: number; transfer: number } | undefined;
  /** Frames per second over the track (samples ÷ media duration); 0 when unknown. */
  frameRate: number;
  /** The track's timescale: ticks per second of pts, dts and durations. */
  timescale: number;
  /** Per sample, decode order: presentation and decode time in ticks from the stream's start, duration in ticks. */
  pts: Float64Array;
  dts: Float64Array;
  durations: Float64Array;
  /** Per sample: byte offset in the file and size. */
  offsets: Float64Array;
  sizes: Uint32Array;
  /** Per sample: 1 where it is a keyframe (every sample when the track has no `stss`). */
  key: Uint8Array;
  /** Bytes read to find and read the index (the file's head and its `moov`). */
  indexBytes: number;
}

/**
 * The most samples read here, on the caller's thread: about an hour at 30 fps, some 10 ms of work
 * (0.1 µs a sample measured). Longer videos are left to the demuxer, on a decode thread.
 */
const MAX_SAMPLES = 100_000;

interface Box {
  type: string;
  /** The payload: after the header (and a full box's version and flags are still in it). */
  start: number;
  end: number;
}

class Reader {
  readonly view: DataView;
  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  u8(at: number): number {
    return this.view.getUint8(at);
  }
  u16(at: number): number {
    return this.view.getUint16(at);
  }
  u32(at: number): number {
    return this.view.getUint32(at);
  }
  i32(at: number): number {
    return this.view.getInt32(at);
  }
  u64(at: number): number {
    const v = this.view.getBigUint64(at);
    return v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.NaN : Number(v);
  }
  i64(at: number): number {
    const v = this.view.getBigInt64(at);
    return v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER) ? Number.NaN : Number(v);
  }
  type(at: number): string {
    return String.fromCharCode(this.u8(at), this.u8(at + 1), this.u8(at + 2), this.u8(at + 3));
  }

  /** The boxes in [from, to); undefined when one runs past `to`. */
  boxes(from: number, to: number): Box[] | undefined {
    const out: Box[] = [];
    for (let at = from; at + 8 <= to; ) {
      let size = this.u32(at);
      let header = 8;
      if (size === 1) {
        if (at + 16 > to) return undefined;
        size = this.u64(at + 8);
        header = 16;
      } else if (size === 0) size = to - at;
      if (!(size >= header) || at + size > to) return undefined;
      out.push({ type: this.type(at + 4), start: at + header, end: at + size });
      at += size;
    }
    return out;
  }

  child(box: Box, type: string, offset = 0): Box | undefined {
    return this.boxes(box.start + offset, box.end)?.find((b) => b.type === type);
  }
}

/** Reads the first video track's timeline from a whole file, or undefined where the demuxer must scan (see above). */
export function readMp4Timeline(bytes: Uint8Array): Mp4Index | undefined {
  return guarded(() => {
    const r = new Reader(bytes);
    const top = r.boxes(0, r.bytes.length);
    if (!top || top[0]?.type !== 'ftyp' || top.some((b) => b.type === 'moof')) return undefined;
    const moov = top.find((b) => b.type === 'moov');
    return moov && readMoov(r, moov, bytes.length);
  });
}

/** The most bytes of `moov` read from a source: some 3 hours of 30 fps video's tables. */
const MAX_MOOV_BYTES = 64 << 20;
/** The file's head read first: `ftyp` and, in a file written for streaming, `moov` behind it. */
const HEAD_BYTES = 16 << 10;
/** Top-level boxes walked before giving up on finding `moov`. */
const MAX_TOP_BOXES = 64;

/**
 * The index of an MP4 read through ranged reads of `source`: the head, then each top-level box's
 * header until `moov`, then `moov` whole; never the media data. Undefined where the file is not
 * an MP4 whose index this reader takes (the caller then reads the file whole and scans it).
 */
export async function readMp4Index(source: ByteSource): Promise<Mp4Index | undefined> {
  const size = source.size;
  if (size === undefined || !(size > 8)) return undefined;
  let read = 0;
  const fetch = async (offset: number, length: number): Promise<Uint8Array> => {
    const bytes = await source.read(offset, length);
    read += bytes.length;
    return bytes;
  };
  const head = await fetch(0, Math.min(size, HEAD_BYTES));
  if (head.length < 16 || String.fromCharCode(...head.subarray(4, 8)) !== 'ftyp') return undefined;
  let at = 0;
  for (let boxes = 0; boxes < MAX_TOP_BOXES && at + 8 <= size; boxes++) {
    const header = at + 16 <= head.length ? head.subarray(at, at + 16) : await fetch(at, Math.min(16, size - at));
    if (header.length < 8) return undefined;
    const h = new Reader(header);
    const type = h.type(4);
    let boxSize = h.u32(0);
    if (boxSize === 1) boxSize = header.length >= 16 ? h.u64(8) : Number.NaN;
    else if (boxSize === 0) boxSize = size - at;
    if (!(boxSize >= 8) || at + boxSize > size || type === 'moof') return undefined;
    if (type === 'moov') {
      if (boxSize > MAX_MOOV_BYTES) return undefined;
      const bytes = at + boxSize <= head.length ? head.subarray(at, at + boxSize) : await fetch(at, boxSize);
      if (bytes.length !== boxSize) return undefined;
      const index = guarded(() => {
        const r = new Reader(bytes);
        const moov = r.boxes(0, bytes.length)?.[0];
        return moov && readMoov(r, moov, size);
      });
      if (index) index.indexBytes = read;
      return index;
    }
    at += boxSize;
  }
  return undefined;
}

function guarded<T>(read: () => T | undefined): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof RangeError) return undefined; // a table running past its box or the file
    throw error;
  }
}

/** The index from `moov`'s box in `r`; `fileSize` bounds the samples' byte ranges. */
function readMoov(r: Reader, moov: Box, fileSize: number): Mp4Index | undefined {
  const inMoov = r.boxes(moov.start, moov.end);
  if (!inMoov || inMoov.some((b) => b.type === 'mvex')) return undefined; // fragmented
  const mvhd = inMoov.find((b) => b.type === 'mvhd');
  if (!mvhd) return undefined;
  const movie = headerTimes(r, mvhd);
  if (!movie || !(movie.duration > 0)) return undefined;
  // One video track; with several, which one the demuxer picks is its own business: scan.
  const videos = inMoov
    .filter((b) => b.type === 'trak')
    .flatMap((trak) => {
      const mdia = r.child(trak, 'mdia');
      const hdlr = mdia && r.child(mdia, 'hdlr');
      return mdia && hdlr && r.type(hdlr.start + 8) === 'vide' ? [{ trak, mdia }] : [];
    });
  const only = videos.length === 1 ? videos[0] : undefined;
  return only && track(r, only.trak, only.mdia, movie, fileSize);
}

/** mvhd and mdhd share their layout up to the duration. */
function headerTimes(r: Reader, box: Box): { timescale: number; duration: number } | undefined {
  const version = r.u8(box.start);
  const timescale = version === 1 ? r.u32(box.start + 20) : r.u32(box.start + 12);
  const duration = version === 1 ? r.u64(box.start + 24) : r.u32(box.start + 16);
  return timescale > 0 ? { timescale, duration } : undefined;
}

function track(r: Reader, trak: Box, mdia: Box, movie: { timescale: number; duration: number }, fileSize: number): Mp4Index | undefined {
  const mdhd = r.child(mdia, 'mdhd');
  const minf = r.child(mdia, 'minf');
  const stbl = minf && r.child(minf, 'stbl');
  if (!mdhd || !stbl) return undefined;
  const media = headerTimes(r, mdhd);
  if (!media) return undefined;
  const tables = r.boxes(stbl.start, stbl.end);
  if (!tables) return undefined;
  const table = (type: string) => tables.find((b) => b.type === type);
  const stsd = table('stsd');
  const stts = table('stts');
  const stsz = table('stsz');
  if (!stsd || !stts || !stsz || r.u32(stsd.start + 4) !== 1) return undefined;
  // The visual sample entry: 8 bytes of header, 6 reserved, 2 data reference index, 16, then width and height.
  const entry = r.boxes(stsd.start + 8, stsd.end)?.[0];
  if (!entry) return undefined;
  const codedWidth = r.u16(entry.start + 24);
  const codedHeight = r.u16(entry.start + 26);
  if (codedWidth === 0 || codedHeight === 0) return undefined;

  const count = r.u32(stsz.start + 8);
  if (count === 0 || count > MAX_SAMPLES) return undefined;
  const dts = decodeTimes(r, stts, count);
  if (!dts) return undefined;
  const durations = new Float64Array(count);
  for (let i = 0; i < count; i++) durations[i] = i + 1 < count ? (dts[i + 1] ?? 0) - (dts[i] ?? 0) : lastDelta(r, stts);
  const pts = dts.slice();
  const ctts = table('ctts');
  if (ctts && !addOffsets(r, ctts, pts)) return undefined;
  const edit = editShift(r, trak, movie.timescale, media.timescale);
  if (edit === undefined) return undefined;
  const shift = edit?.start ?? 0;
  // Times count from the stream's start: its first shown frame (a stream without an edit list
  // whose first frame shows after its decode, at a composition offset, starts there).
  let start = Number.POSITIVE_INFINITY;
  for (const t of pts) start = Math.min(start, t - shift);
  // A frame the edit cuts (the demuxer marks it discarded), or an edit whose first frame shows
  // late: left to the demuxer.
  if (start < 0 || (edit !== null && start > 0)) return undefined;
  for (let i = 0; i < count; i++) {
    pts[i] = (pts[i] ?? 0) - shift - start;
    dts[i] = (dts[i] ?? 0) - shift - start;
  }
  const frameTimes = pts.map((t) => microseconds(t, media.timescale) / 1e6).sort();
  const sizes = sampleSizes(r, stsz, count);
  const offsets = sizes && sampleOffsets(r, tables, sizes, fileSize);
  if (!sizes || !offsets) return undefined;
  const stss = table('stss');
  const key = stss ? keyFlags(r, stss, count) : new Uint8Array(count).fill(1);
  // No sync sample first (an empty stss says none is marked: the demuxer finds them in the stream).
  if (!key || !key[0]) return undefined;
  // An edit that ends before the last frame: in decode order, the demuxer keeps the first keyframe
  // that reaches the edit's end (with composition offsets, the second: B-frames after the first may
  // still show inside the edit) and drops every frame after it (mov_fix_index). Left to it then.
  if (edit && Number.isFinite(edit.end)) {
    let reaching = 0;
    for (let i = 0; i < count - 1; i++)
      if (key[i] && (pts[i] ?? 0) + shift + (durations[i] ?? 0) >= edit.end && ++reaching > (ctts ? 1 : 0)) return undefined;
  }
  const children = r.boxes(entry.start + 78, entry.end) ?? [];
  // H.264, HEVC and AV1 need their avcC, hvcC and av1C (AV1's sequence header may be there
  // alone); VP9's decoder reads all it needs from the frames (vpcC only repeats it).
  const config = children.find((b) => b.type === 'avcC' || b.type === 'hvcC' || b.type === 'av1C');
  const codec = !config
    ? entry.type === 'vp09'
      ? 'vp9'
      : undefined
    : config.type === 'avcC' && (entry.type === 'avc1' || entry.type === 'avc3')
      ? 'h264'
      : config.type === 'hvcC' && (entry.type === 'hvc1' || entry.type === 'hev1')
        ? 'hevc'
        : config.type === 'av1C' && entry.type === 'av01'
          ? 'av1'
          : undefined;
  const mediaSeconds = media.duration / media.timescale;
  return {
    sampleEntry: entry.type,
    codedWidth,
    codedHeight,
    durationSeconds: Math.floor(microseconds(movie.duration, movie.timescale) / 1000) / 1000,
    frameTimes,
    samples: count,
    keyframes: key.reduce((n, k) => n + k, 0),
    codec,
    extradata: config ? r.bytes.slice(config.start, config.end) : undefined,
    color: colourTags(
      r,
      children.find((b) => b.type === 'colr'),
    ),
    frameRate: mediaSeconds > 0 ? count / mediaSeconds : 0,
    timescale: media.timescale,
    pts,
    dts,
    durations,
    offsets,
    sizes,
    key,
    indexBytes: 0,
  };
}

/** The last stts entry's delta: the last sample's duration. */
function lastDelta(r: Reader, stts: Box): number {
  const entries = r.u32(stts.start + 4);
  return entries > 0 ? r.u32(stts.start + 12 + (entries - 1) * 8) : 0;
}

/** Each sample's size (stsz: one size for all, or a table). */
function sampleSizes(r: Reader, stsz: Box, count: number): Uint32Array | undefined {
  const fixed = r.u32(stsz.start + 4);
  const sizes = new Uint32Array(count);
  if (fixed !== 0) return sizes.fill(fixed);
  for (let i = 0; i < count; i++) sizes[i] = r.u32(stsz.start + 12 + i * 4);
  return sizes;
}

/** Each sample's file offset: chunks from stco/co64, samples per chunk from stsc, sizes within a chunk. */
function sampleOffsets(r: Reader, tables: Box[], sizes: Uint32Array, fileSize: number): Float64Array | undefined {
  const stsc = tables.find((b) => b.type === 'stsc');
  const stco = tables.find((b) => b.type === 'stco');
  const co64 = tables.find((b) => b.type === 'co64');
  const chunkBox = stco ?? co64;
  if (!stsc || !chunkBox) return undefined;
  const chunks = r.u32(chunkBox.start + 4);
  const chunkOffset = (c: number) => (stco ? r.u32(stco.start + 8 + c * 4) : r.u64(chunkBox.start + 8 + c * 8));
  const runs = r.u32(stsc.start + 4);
  const offsets = new Float64Array(sizes.length);
  let sample = 0;
  for (let e = 0; e < runs && sample < sizes.length; e++) {
    const first = r.u32(stsc.start + 8 + e * 12) - 1;
    const perChunk = r.u32(stsc.start + 12 + e * 12);
    const last = e + 1 < runs ? r.u32(stsc.start + 8 + (e + 1) * 12) - 1 : chunks;
    if (first < 0 || last > chunks || last < first || perChunk === 0) return undefined;
    for (let c = first; c < last && sample < sizes.length; c++) {
      let at = chunkOffset(c);
      for (let k = 0; k < perChunk && sample < sizes.length; k++, sample++) {
        const size = sizes[sample] ?? 0;
        if (!(at >= 0) || at + size > fileSize) return undefined;
        offsets[sample] = at;
        at += size;
      }
    }
  }
  return sample === sizes.length ? offsets : undefined;
}

/** 1 per keyframe sample (stss lists them, numbered from 1). */
function keyFlags(r: Reader, stss: Box, count: number): Uint8Array | undefined {
  const key = new Uint8Array(count);
  const entries = r.u32(stss.start + 4);
  for (let e = 0; e < entries; e++) {
    const n = r.u32(stss.start + 8 + e * 4);
    if (n < 1 || n > count) return undefined;
    key[n - 1] = 1;
  }
  return key;
}

/** A `colr` box's nclx/nclc tags as the demuxer passes them on (range: 2 full, 1 limited, nclc none). */
function colourTags(r: Reader, colr: Box | undefined): Mp4Index['color'] {
  if (!colr || colr.end - colr.start < 10) return undefined;
  const kind = r.type(colr.start);
  if (kind !== 'nclx' && kind !== 'nclc') return undefined;
  const primaries = r.u16(colr.start + 4);
  const transfer = r.u16(colr.start + 6);
  const space = r.u16(colr.start + 8);
  const range = kind === 'nclx' && colr.end - colr.start >= 11 ? (r.u8(colr.start + 10) >> 7 === 1 ? 2 : 1) : 0;
  // Values past a byte name nothing libavutil knows: unspecified (2), as the demuxer makes them.
  const known = (v: number) => (v <= 255 ? v : 2);
  return { space: known(space), range, primaries: known(primaries), transfer: known(transfer) };
}

/** Each sample's decode time, in the media's timescale (stts). */
function decodeTimes(r: Reader, stts: Box, count: number): Float64Array | undefined {
  const entries = r.u32(stts.start + 4);
  const out = new Float64Array(count);
  let n = 0;
  let t = 0;
  for (let e = 0; e < entries && n < count; e++) {
    const samples = r.u32(stts.start + 8 + e * 8);
    const delta = r.u32(stts.start + 12 + e * 8);
    for (let k = 0; k < samples && n < count; k++, n++) {
      out[n] = t;
      t += delta;
    }
  }
  return n === count ? out : undefined;
}

/** Adds each sample's composition offset (ctts, read signed as the demuxer does). */
function addOffsets(r: Reader, ctts: Box, times: Float64Array): boolean {
  const entries = r.u32(ctts.start + 4);
  let n = 0;
  for (let e = 0; e < entries && n < times.length; e++) {
    const samples = r.u32(ctts.start + 8 + e * 8);
    const offset = r.i32(ctts.start + 12 + e * 8);
    for (let k = 0; k < samples && n < times.length; k++, n++) times[n] = (times[n] ?? 0) + offset;
  }
  return n === times.length;
}

/**
 * The one edit of a track: the media time the presentation starts at, and where it ends (media
 * units; Infinity for a segment of duration 0, which runs to the end). null without an edit list;
 * undefined for anything else (empty edits, several edits, other rates).
 */
function editShift(r: Reader, trak: Box, movieScale: number, mediaScale: number): { start: number; end: number } | null | undefined {
  const edts = r.child(trak, 'edts');
  if (!edts) return null;
  const elst = r.child(edts, 'elst');
  if (!elst) return null;
  const version = r.u8(elst.start);
  if (r.u32(elst.start + 4) !== 1) return undefined;
  const at = elst.start + 8;
  const segment = version === 1 ? r.i64(at) : r.u32(at);
  const mediaTime = version === 1 ? r.i64(at + 8) : r.i32(at + 4);
  const rate = r.u32(at + (version === 1 ? 16 : 8));
  if (!(mediaTime >= 0) || !(segment >= 0) || rate !== 0x10000 || !(movieScale > 0 && mediaScale > 0)) return undefined;
  // libavformat's rounding of the segment into media units (av_rescale).
  return { start: mediaTime, end: segment === 0 ? Number.POSITIVE_INFINITY : mediaTime + Math.round((segment * mediaScale) / movieScale) };
}

/** ts × 10⁶ / timescale to the nearest integer, halves away from zero (av_rescale_q's rounding). */
function microseconds(ts: number, timescale: number): number {
  return Math.round((ts * 1e6) / timescale);
}
