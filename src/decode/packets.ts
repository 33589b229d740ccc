// A video job over packets the caller cut from the container itself (wasm/src/packets.c): an
// MP4's index gives every sample's bytes and times (src/video/mp4-index.ts), so the job reads
// only the clip's packets and opens no container. One input block carries them:
//   packet bytes | zero pad to 8 | td_packet[count] (32 bytes each) | extradata
import { CODEC_NAMES, Field, JobKind } from './abi.ts';
import { badRequest } from './media.ts';

/** The codecs a packets job takes (the module's video decoders). */
const PACKET_CODECS = ['h264', 'hevc', 'vp8', 'vp9', 'av1'] as const;
export type PacketCodec = (typeof PACKET_CODECS)[number];

/**
 * A clip's packets in decode order, with what a container would tell the decoder. Packet i is
 * `data[offsets[i], offsets[i] + sizes[i])`; times are whole ticks of `timescale` from the
 * stream's start (its first shown frame), as the container's demuxer gives them.
 */
export interface VideoPackets {
  codec: PacketCodec;
  codedWidth: number;
  codedHeight: number;
  /** The codec's configuration from the container (an MP4's `avcC`, `hvcC` or `av1C` payload); none for VP8 and VP9. */
  extradata?: Uint8Array;
  /** The duration the container declares (checked against maxDurationSeconds); NaN when unknown. */
  durationSeconds: number;
  /** Frames per second as the container states it; 0 when unknown. */
  frameRate: number;
  /** Ticks per second of the packets' times (an MP4 track's timescale). */
  timescale: number;
  /** The container's colour tags as libavcodec's enum values (AVColorSpace, …); unspecified when absent. */
  color?: { space: number; range: number; primaries: number; transfer: number };
  data: Uint8Array;
  offsets: Uint32Array;
  sizes: Uint32Array;
  pts: Float64Array;
  /** NaN where the container gives none. */
  dts: Float64Array;
  durations: Float64Array;
  /** Per packet: PACKET_KEY, and PACKET_RUN on the first packet of a run after a gap in decode order. */
  flags: Uint8Array;
}

export const PACKET_KEY = 1;
/** The decoder is drained and flushed before this packet: the packets before it end a run. */
export const PACKET_RUN = 2;
const PACKET_BYTES = 32;
const UNSPECIFIED = { space: 2, range: 0, primaries: 2, transfer: 2 };

export function isVideoPackets(input: Uint8Array | VideoPackets): input is VideoPackets {
  return !(input instanceof Uint8Array);
}

/** The job's input block and a writer of its packet fields; the packets' shape is checked here. */
export function packetsInput(p: VideoPackets): { bytes: Uint8Array; fill: (w: Int32Array) => void } {
  const n = p.offsets.length;
  if (n === 0 || [p.sizes, p.pts, p.dts, p.durations, p.flags].some((a) => a.length !== n))
    badRequest('packets: offsets, sizes, times, durations and flags must be equally long, and not empty');
  const codec = CODEC_NAMES.indexOf(p.codec);
  if (!(Number.isInteger(p.timescale) && p.timescale > 0 && p.timescale <= 0x7fffffff))
    badRequest('packets: timescale must be a positive 32-bit integer');
  if (codec <= 0 || !PACKET_CODECS.includes(p.codec)) badRequest(`packets: no decoder for codec '${String(p.codec)}'`);
  const extradata = p.extradata ?? new Uint8Array(0);
  const table = align8(p.data.length);
  const extraAt = table + n * PACKET_BYTES;
  const bytes = new Uint8Array(extraAt + extradata.length);
  bytes.set(p.data);
  const view = new DataView(bytes.buffer, table, n * PACKET_BYTES);
  for (let i = 0; i < n; i++) {
    const at = i * PACKET_BYTES;
    view.setInt32(at, p.offsets[i] ?? 0, true);
    view.setInt32(at + 4, p.sizes[i] ?? 0, true);
    view.setInt32(at + 8, p.flags[i] ?? 0, true);
    view.setInt32(at + 12, Math.min(0x7fffffff, Math.max(0, Math.round(p.durations[i] ?? 0))), true);
    view.setFloat64(at + 16, p.pts[i] ?? Number.NaN, true);
    view.setFloat64(at + 24, p.dts[i] ?? Number.NaN, true);
  }
  bytes.set(extradata, extraAt);
  const c = p.color ?? UNSPECIFIED;
  const ms = p.durationSeconds * 1000;
  return {
    bytes,
    fill(w) {
      w[Field.Kind] = JobKind.VideoPackets;
      w[Field.PkTable] = table;
      w[Field.PkCount] = n;
      w[Field.PkExtradata] = extraAt;
      w[Field.PkExtradataLen] = extradata.length;
      w[Field.PkCodec] = codec;
      w[Field.PkWidth] = p.codedWidth;
      w[Field.PkHeight] = p.codedHeight;
      w[Field.PkDurationMs] = Number.isFinite(ms) && ms >= 0 ? Math.min(0x7fffffff, Math.floor(ms)) : -1;
      w[Field.PkRateMilli] = p.frameRate > 0 ? Math.min(0x7fffffff, Math.round(p.frameRate * 1000)) : 0;
      w[Field.PkTimescale] = p.timescale;
      w[Field.PkColor] = (c.space & 0xff) | ((c.range & 0xff) << 8) | ((c.primaries & 0xff) << 16) | ((c.transfer & 0xff) << 24);
    },
  };
}

function align8(n: number): number {
  return (n + 7) & ~7;
}
