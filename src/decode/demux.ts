// Demux jobs: the packets of a video stream without decoding them (wasm/src/demux.c), for
// WebCodecs (EncodedVideoChunk bytes, timestamps, key flags and the VideoDecoderConfig) and for
// clip samplers (every frame's exact presentation time before any frame is chosen).
import { CODEC_NAMES, MEDIA_FORMAT_NAMES, Field, JobKind } from './abi.ts';
import { duration, limitMs, timeLimitMs, type MediaCodec, type MediaFormat } from './media.ts';
import { OptionChecker } from '../errors/index.ts';

export interface VideoDemuxOptions {
  /** Start of the range in seconds from the stream's start (default 0): packets begin at the keyframe at or before it. */
  startSeconds?: number;
  /**
   * End of the range in seconds (default: the end of the stream). Reading stops at the first packet
   * that decodes after it (its dts, or its pts without one), so every frame shown up to the end
   * decodes from the packets returned.
   */
  endSeconds?: number;
  /** Copy each packet's bytes (default true); false returns times, key flags and sizes only. */
  packets?: boolean;
  /** Most packets the range may hold; more fail as 'too-large' (default 1 000 000). */
  maxPackets?: number;
  /** Most bytes of packet data the range may hold; more fail as 'too-large' (default 256 MiB). */
  maxBytes?: number;
  /** Refuse files declaring a longer duration (default 24 hours, 0: no limit). */
  maxDurationSeconds?: number;
  /** Wall-clock limit for the job in ms; past it the item fails as 'over-budget' (default 60 000, 0: none). */
  timeLimitMs?: number;
  /** Refuse streams declaring more pixels per frame (default 40 000 000, as image decodes). */
  maxPixels?: number;
  /** Streamed input (a ByteSource): bytes read at a time, and the most input held in wasm memory (default 1 MiB). */
  windowBytes?: number;
  /** Streamed input: a read slower than this fails the item (default 30 000 ms). */
  readTimeoutMs?: number;
}

export interface DemuxedVideo {
  format: MediaFormat;
  codec: MediaCodec;
  /**
   * The WebCodecs codec string: 'avc1.PPCCLL' (from the avcC record's profile, constraint and level
   * bytes), 'vp8', 'vp09.PP.LL.DD' (profile, level — 10 when the container gives none —, bit
   * depth), 'av01.P.LLT.DD' (from the av1C record: profile, level, tier, bit depth); '' for other
   * codecs and for AV1 without its av1C.
   */
  codecString: string;
  /** VideoDecoderConfig.description: the avcC record for H.264 in MP4/MKV; undefined where WebCodecs wants none. */
  description: Uint8Array | undefined;
  codedWidth: number;
  codedHeight: number;
  /** Average frame rate as the container states it; 0 when unknown. */
  frameRate: number;
  /** As declared by the container; NaN when unknown. */
  durationSeconds: number;
  /** Packets returned, in decode order; the first is a keyframe. */
  count: number;
  /**
   * Presentation and decode times in µs from the stream's start (the origin of decodeVideo's
   * timestamps). A packet without a pts takes its dts as pts; NaN where the file gives neither.
   */
  ptsUs: Float64Array;
  dtsUs: Float64Array;
  /** 0 where the container gives none. */
  durationUs: Float64Array;
  /** 1 for keyframes. */
  key: Uint8Array;
  /** Where each packet's bytes lie in `data` (0 with `packets: false`). */
  offset: Uint32Array;
  size: Uint32Array;
  /** The packets' bytes back to back, copied out of wasm memory; empty with `packets: false`. */
  data: Uint8Array;
  /** Presentation times in seconds of the packets that have one, ascending (the clip samplers' input). */
  frameTimes: Float64Array;
  /**
   * The stream's colour tags in WebCodecs' VideoColorSpaceInit names, for VideoDecoderConfig.colorSpace;
   * undefined when the stream tags none of them. A field is undefined where that tag is missing or
   * has no WebCodecs name. The wasm decode converts with the tagged matrix and range, BT.601
   * ('smpte170m') and limited range where untagged, so filling the missing fields with those
   * gives WebCodecs the wasm decode's conversion.
   */
  colorSpace: VideoColorTags | undefined;
}

/** VideoColorSpaceInit's names (WebCodecs), declared here so that Node and Deno builds need no DOM types. */
export type VideoMatrixName = 'rgb' | 'bt709' | 'bt470bg' | 'smpte170m' | 'bt2020-ncl';
export type VideoPrimariesName = 'bt709' | 'bt470bg' | 'smpte170m' | 'bt2020' | 'smpte432';
export type VideoTransferName = 'bt709' | 'smpte170m' | 'iec61966-2-1' | 'linear' | 'pq' | 'hlg';
export interface VideoColorTags {
  matrix: VideoMatrixName | undefined;
  primaries: VideoPrimariesName | undefined;
  transfer: VideoTransferName | undefined;
  fullRange: boolean | undefined;
}

// libavutil/pixfmt.h's AVColorSpace, AVColorPrimaries and AVColorTransferCharacteristic values
// that WebCodecs names; 2 is UNSPECIFIED in all three.
const MATRIX_NAMES: Partial<Record<number, VideoMatrixName>> = { 0: 'rgb', 1: 'bt709', 5: 'bt470bg', 6: 'smpte170m', 9: 'bt2020-ncl' };
const PRIMARIES_NAMES: Partial<Record<number, VideoPrimariesName>> = {
  1: 'bt709',
  5: 'bt470bg',
  6: 'smpte170m',
  9: 'bt2020',
  12: 'smpte432',
};
const TRANSFER_NAMES: Partial<Record<number, VideoTransferName>> = {
  1: 'bt709',
  6: 'smpte170m',
  8: 'linear',
  13: 'iec61966-2-1',
  16: 'pq',
  18: 'hlg',
};
const UNSPECIFIED = 2;
/** AVColorRange: 0 unspecified, 1 MPEG (limited), 2 JPEG (full). */
const RANGE_FULL = 2;

/** The colour tags of a finished demux job (see DemuxedVideo.colorSpace). */
export function colorTags(space: number, range: number, primaries: number, transfer: number): VideoColorTags | undefined {
  if (space === UNSPECIFIED && primaries === UNSPECIFIED && transfer === UNSPECIFIED && range === 0) return undefined;
  return {
    matrix: MATRIX_NAMES[space],
    primaries: PRIMARIES_NAMES[primaries],
    transfer: TRANSFER_NAMES[transfer],
    fullRange: range === 0 ? undefined : range === RANGE_FULL,
  };
}

const DEFAULT_MAX_PACKETS = 1_000_000;
const DEFAULT_MAX_BYTES = 256 << 20;
const DEFAULT_MAX_PIXELS = 40_000_000;
const DEFAULT_MAX_DURATION_SECONDS = 24 * 3600;
/** The limits a demux applies when the options give none (the video loader's index path applies them too). */
export const DEMUX_LIMITS = { maxPixels: DEFAULT_MAX_PIXELS, maxDurationSeconds: DEFAULT_MAX_DURATION_SECONDS } as const;
/** wasm/src/tandem_decode.h TD_MAX_DEMUX_PACKETS and TD_MAX_DEMUX_BYTES. */
const MAX_PACKETS = 1 << 24;
const MAX_BYTES = 1 << 30;
/** Bytes of one packet's row in the result block's table: three f64, two u32, one u8. */
const ENTRY_BYTES = 3 * 8 + 2 * 4 + 1;

const KNOWN = [
  'startSeconds',
  'endSeconds',
  'packets',
  'maxPackets',
  'maxBytes',
  'maxDurationSeconds',
  'timeLimitMs',
  'maxPixels',
  'windowBytes',
  'readTimeoutMs',
];

/** The options of one demuxVideo call, checked (OptionError) before anything is allocated. */
export function checkDemuxOptions(options: VideoDemuxOptions | undefined): { windowBytes: number; readTimeoutMs: number | undefined } {
  const o = new OptionChecker('DecodePool.demuxVideo options', options, KNOWN);
  const start = o.number('startSeconds', 0, 0, 0x7fffffff / 1000);
  if (options?.endSeconds !== undefined) o.number('endSeconds', 0, start, 0x7fffffff / 1000);
  o.boolean('packets', true);
  o.integer('maxPackets', DEFAULT_MAX_PACKETS, 1, MAX_PACKETS);
  o.integer('maxBytes', DEFAULT_MAX_BYTES, 0, MAX_BYTES);
  o.number('maxDurationSeconds', DEFAULT_MAX_DURATION_SECONDS, 0, 0x7fffffff / 1000);
  o.number('timeLimitMs', 60_000, 0, 0x7fffffff);
  o.integer('maxPixels', DEFAULT_MAX_PIXELS, 1, 0x7fffffff);
  const windowBytes = o.integer('windowBytes', 1 << 20, 4096, 1 << 30);
  const readTimeoutMs = o.optionalInteger('readTimeoutMs', 1);
  return { windowBytes, readTimeoutMs };
}

/** @internal Writes a demux request (options already checked) into a cleared job record. */
export function fillDemux(w: Int32Array, o: VideoDemuxOptions = {}, streamRecord?: number): void {
  w[Field.Kind] = streamRecord === undefined ? JobKind.VideoDemux : JobKind.VideoDemuxStream;
  if (streamRecord !== undefined) w[Field.Src] = streamRecord;
  // The range widens to whole ms: the start rounds down, the end up.
  w[Field.StartMs] = Math.floor((o.startSeconds ?? 0) * 1000);
  w[Field.EndMs] = o.endSeconds === undefined ? -1 : Math.ceil(o.endSeconds * 1000);
  w[Field.MaxPackets] = o.maxPackets ?? DEFAULT_MAX_PACKETS;
  w[Field.MaxBytes] = o.maxBytes ?? DEFAULT_MAX_BYTES;
  w[Field.DemuxBytes] = o.packets === false ? 0 : 1;
  w[Field.MaxPixels] = o.maxPixels ?? DEFAULT_MAX_PIXELS;
  w[Field.MaxDurationMs] = limitMs(o.maxDurationSeconds);
  w[Field.TimeLimitMs] = timeLimitMs(o.timeLimitMs);
}

const hex2 = (n: number | undefined): string => ((n ?? 0) & 0xff).toString(16).padStart(2, '0').toUpperCase();
const dec2 = (n: number): string => String(n).padStart(2, '0');

/** The WebCodecs codec string of a stream (see DemuxedVideo.codecString). */
export function codecString(codec: MediaCodec, profile: number, level: number, bitDepth: number, extradata: Uint8Array): string {
  if (codec === 'h264') {
    if (extradata.length >= 4 && extradata[0] === 1) return `avc1.${hex2(extradata[1])}${hex2(extradata[2])}${hex2(extradata[3])}`;
    return profile >= 0 && level >= 0 ? `avc1.${hex2(profile)}00${hex2(level)}` : '';
  }
  if (codec === 'vp8') return 'vp8';
  if (codec === 'vp9') return `vp09.${dec2(Math.max(0, profile))}.${dec2(level > 0 ? level : 10)}.${dec2(bitDepth || 8)}`;
  // AV1 from its av1C record (marker and version byte 0x81): profile and level, tier, bit depth.
  if (codec === 'av1' && extradata.length >= 4 && extradata[0] === 0x81) {
    const b1 = extradata[1] ?? 0,
      b2 = extradata[2] ?? 0;
    const depth = b2 & 0x40 ? (b2 & 0x20 ? 12 : 10) : 8;
    return `av01.${b1 >> 5}.${dec2(b1 & 31)}${b2 & 0x80 ? 'H' : 'M'}.${dec2(depth)}`;
  }
  return '';
}

/**
 * @internal Copies a finished demux job's result block (layout in wasm/src/tandem_decode.h) out of
 * `memory`; the caller frees the block.
 */
export function readDemux(w: Int32Array, memory: ArrayBufferLike): DemuxedVideo {
  const n = w[Field.FramesOut] ?? 0;
  const block = w[Field.Result] ?? 0;
  const dataLen = w[Field.DataLen] ?? 0;
  const extraLen = w[Field.ExtradataLen] ?? 0;
  const at = block + ((dataLen + extraLen + 7) & ~7);
  if ((w[Field.ResultLen] ?? 0) !== at - block + n * ENTRY_BYTES) throw new RangeError('demux result block of an unexpected size');
  const heap = new Uint8Array(memory);
  const f64 = (i: number) => new Float64Array(heap.slice(at + i * 8 * n, at + (i + 1) * 8 * n).buffer);
  const u32 = (i: number) => new Uint32Array(heap.slice(at + 24 * n + i * 4 * n, at + 24 * n + (i + 1) * 4 * n).buffer);
  const ptsUs = f64(0);
  const extradata = heap.slice(block + dataLen, block + dataLen + extraLen);
  const codec = CODEC_NAMES[w[Field.Codec] ?? 0] ?? 'other';
  const frameTimes = Float64Array.from(
    ptsUs.filter((t) => !Number.isNaN(t)),
    (t) => t / 1e6,
  ).sort();
  return {
    format: MEDIA_FORMAT_NAMES[w[Field.Format] ?? 0] ?? 'unknown',
    codec,
    codecString: codecString(codec, w[Field.Profile] ?? -1, w[Field.Level] ?? -1, w[Field.BitDepth] ?? 0, extradata),
    description: codec === 'h264' && extradata.length >= 4 && extradata[0] === 1 ? extradata : undefined,
    codedWidth: w[Field.SrcW] ?? 0,
    codedHeight: w[Field.SrcH] ?? 0,
    frameRate: (w[Field.SrcRate] ?? 0) / 1000,
    durationSeconds: duration(w),
    count: n,
    ptsUs,
    dtsUs: f64(1),
    durationUs: f64(2),
    offset: u32(0),
    size: u32(1),
    key: heap.slice(at + 32 * n, at + 33 * n),
    data: heap.slice(block, block + dataLen),
    frameTimes,
    colorSpace: colorTags(
      w[Field.ColorSpace] ?? UNSPECIFIED,
      w[Field.ColorRange] ?? 0,
      w[Field.ColorPrimaries] ?? UNSPECIFIED,
      w[Field.ColorTrc] ?? UNSPECIFIED,
    ),
  };
}
