// A video's timeline from an MP4's sample tables, without reading or copying a packet: the `moov`
// box's video track gives every sample's decode time (stts), composition offset (ctts), keyframe
// flag (stss), size (stsz) and file offset (stsc + stco/co64). The clip sampler needs only the
// presentation times, so the loader's sample stage reads them here instead of running the wasm
// demuxer over the whole file on a decode thread.
//
// The times must be the wasm demuxer's (libavformat's mov demuxer) to the microsecond, so only the
// layouts whose times that demuxer gives plainly are taken: no edit list, or one edit starting
// the media at M ≥ 0 at rate 1 with no frame shown before M (the shift encoders write for
// B-frames), a movie duration in `mvhd`, one sample description. Anything else (fragmented
// files, empty or several edits, frames cut by an edit, `stz2`) returns undefined and the caller
// scans with the demuxer, as it did before. Malformed boxes return undefined too: the demuxer
// then gives the typed error.

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

/** Reads the first video track's timeline, or undefined where the demuxer must scan (see above). */
export function readMp4Timeline(bytes: Uint8Array): Mp4Timeline | undefined {
  try {
    return read(new Reader(bytes));
  } catch (error) {
    if (error instanceof RangeError) return undefined; // a table running past its box or the file
    throw error;
  }
}

function read(r: Reader): Mp4Timeline | undefined {
  const top = r.boxes(0, r.bytes.length);
  if (!top || top[0]?.type !== 'ftyp') return undefined;
  const moov = top.find((b) => b.type === 'moov');
  if (!moov || top.some((b) => b.type === 'moof')) return undefined;
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
  return only && track(r, only.trak, only.mdia, movie);
}

/** mvhd and mdhd share their layout up to the duration. */
function headerTimes(r: Reader, box: Box): { timescale: number; duration: number } | undefined {
  const version = r.u8(box.start);
  const timescale = version === 1 ? r.u32(box.start + 20) : r.u32(box.start + 12);
  const duration = version === 1 ? r.u64(box.start + 24) : r.u32(box.start + 16);
  return timescale > 0 ? { timescale, duration } : undefined;
}

function track(r: Reader, trak: Box, mdia: Box, movie: { timescale: number; duration: number }): Mp4Timeline | undefined {
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
  const ctts = table('ctts');
  if (ctts && !addOffsets(r, ctts, dts)) return undefined;
  const edit = editShift(r, trak, movie.timescale, media.timescale);
  if (edit === undefined) return undefined;
  const shift = edit ?? 0;
  // Times count from the stream's start: its first shown frame (a stream without an edit list
  // whose first frame shows after its decode, at a composition offset, starts there).
  let start = Number.POSITIVE_INFINITY;
  for (const t of dts) start = Math.min(start, t - shift);
  // A frame the edit cuts (the demuxer marks it discarded), or an edit whose first frame shows
  // late: left to the demuxer.
  if (start < 0 || (edit !== null && start > 0)) return undefined;
  const frameTimes = dts.map((t) => microseconds(t - shift - start, media.timescale) / 1e6).sort();
  const stss = table('stss');
  return {
    sampleEntry: entry.type,
    codedWidth,
    codedHeight,
    durationSeconds: Math.floor(microseconds(movie.duration, movie.timescale) / 1000) / 1000,
    frameTimes,
    samples: count,
    keyframes: stss ? r.u32(stss.start + 4) : count,
  };
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
 * The media time the presentation starts at: null without an edit list, M for one edit (M ≥ 0,
 * rate 1); undefined for anything else (empty edits, several edits, other rates).
 */
function editShift(r: Reader, trak: Box, movieScale: number, mediaScale: number): number | null | undefined {
  const edts = r.child(trak, 'edts');
  if (!edts) return null;
  const elst = r.child(edts, 'elst');
  if (!elst) return null;
  const version = r.u8(elst.start);
  if (r.u32(elst.start + 4) !== 1) return undefined;
  const at = elst.start + 8;
  const mediaTime = version === 1 ? r.i64(at + 8) : r.i32(at + 4);
  const rate = r.u32(at + (version === 1 ? 16 : 8));
  if (!(mediaTime >= 0) || rate !== 0x10000 || !(movieScale > 0 && mediaScale > 0)) return undefined;
  return mediaTime;
}

/** ts × 10⁶ / timescale to the nearest integer, halves away from zero (av_rescale_q's rounding). */
function microseconds(ts: number, timescale: number): number {
  return Math.round((ts * 1e6) / timescale);
}
