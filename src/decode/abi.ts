// The JS side of the job record shared with wasm/src/tandem_decode.h. Every field is one i32 word;
// the C side static-asserts the same layout, and loadDecodeModule checks the word count at start.

export const JOB_WORDS = 81;
export const JOB_MESSAGE_BYTES = 96;
export const JOB_BYTES = JOB_WORDS * 4 + JOB_MESSAGE_BYTES;
/**
 * Writes `message` as the record's NUL-terminated message: whole UTF-8 characters, at most
 * JOB_MESSAGE_BYTES − 1 bytes, the rest zero. Bounded in bytes, not characters, so text of any
 * script stays inside its record.
 */
export function writeJobMessage(heap: Uint8Array, jobPtr: number, message: string): void {
  const field = heap.subarray(jobPtr + JOB_WORDS * 4, jobPtr + JOB_BYTES);
  field.fill(0);
  new TextEncoder().encodeInto(message, field.subarray(0, JOB_MESSAGE_BYTES - 1));
}

/** ffmpeg reads up to this many bytes past the input; they must exist and be zero. */
export const INPUT_PADDING = 64;

export const enum Field {
  State = 0,
  Status,
  Src,
  SrcLen,
  Dst,
  DstW,
  DstH,
  Channels,
  Fit,
  Filter,
  MaxPixels,
  AllowReduced,
  ApplyOrientation,
  CropX,
  CropY,
  CropW,
  CropH,
  PadValue,
  SrcW,
  SrcH,
  Format,
  ReducedEighths,
  Orientation,
  AvError,
  OnPoolThread,
  Next,
  // audio and video jobs
  Kind,
  SampleRate,
  MaxFrames,
  StartMs,
  MaxDurationMs,
  SelectMode,
  Select,
  FpsMilli,
  PtsOut,
  FramesOut,
  SrcRate,
  SrcChannels,
  DurationMs,
  Codec,
  // audio and video request: wall-clock limit in ms (0: none)
  TimeLimitMs,
  // image request: random resized crop and flip (millionths), and whether the output was flipped
  RrcSeed,
  RrcScaleLo,
  RrcScaleHi,
  RrcRatioLo,
  RrcRatioHi,
  FlipChance,
  Flipped,
  // JPEG request: 1 decodes the whole image even where the output reads less
  WindowOff,
  // image result: the pixels decoded (a JPEG's window) out of the whole frame at the decode's scale
  DecodedW,
  DecodedH,
  FrameW,
  FrameH,
  // result: microseconds the thread spent on the job
  ThreadUs,
  // video request: 1 mirrors every frame left to right after the resize
  Flip,
  // demux request: range end (ms, -1: none), limits, 1 to copy packet bytes
  EndMs,
  MaxPackets,
  MaxBytes,
  DemuxBytes,
  // demux result: the malloc'd block (src/decode/demux.ts reads it) and the codec's parameters
  Result,
  ResultLen,
  ExtradataLen,
  DataLen,
  Profile,
  Level,
  BitDepth,
  // demux result: the stream's colour tags as libavcodec's enum values
  ColorSpace,
  ColorRange,
  ColorPrimaries,
  ColorTrc,
  // packets request (src/decode/packets.ts): the table and extradata as byte offsets in the input,
  // and the stream's parameters as the container's index gives them
  PkTable,
  PkCount,
  PkExtradata,
  PkExtradataLen,
  PkCodec,
  PkWidth,
  PkHeight,
  PkDurationMs,
  PkRateMilli,
  PkColor,
  PkTimescale,
}

export const enum JobKind {
  Image = 0,
  Audio = 1,
  Video = 2,
  VideoStream = 3,
  VideoDemux = 4,
  VideoDemuxStream = 5,
  VideoPackets = 6,
}
export const enum SelectMode {
  Indices = 0,
  TimesMs = 1,
  Rate = 2,
  FrameTimesMs = 3,
}
/** Most frames one video job may write (wasm/src/tandem_decode.h TD_MAX_CLIP_FRAMES). */
export const MAX_CLIP_FRAMES = 65536;
export const MAX_AUDIO_CHANNELS = 8;

/** Running: a pool thread has taken the job; the pool's watchdog times it from then on. */
export const enum JobState {
  Idle = 0,
  Queued = 1,
  Done = 2,
  Running = 3,
}

/** The td_stream record of a streamed video job (wasm/src/tandem_decode.h). */
export const STREAM_WORDS = 9;
export const enum StreamField {
  State = 0,
  WantLo,
  WantHi,
  WantLen,
  GotLen,
  SizeLo,
  SizeHi,
  Buffer,
  Capacity,
}
export const enum StreamState {
  Idle = 0,
  Want = 1,
  Filled = 2,
  Closed = 3,
}

export const STATUS_CODES = [
  'ok',
  'empty',
  'unknown-format',
  'too-large',
  'truncated',
  'corrupt',
  'out-of-memory',
  'bad-request',
  'over-budget',
  'cancelled',
] as const;

export const FIT_CODES = { stretch: 0, cover: 1, contain: 2 } as const;
export const FILTER_CODES = { bilinear: 0, bicubic: 1, area: 2, nearest: 3, lanczos: 4 } as const;
export const FORMAT_NAMES = ['unknown', 'jpeg', 'png', 'webp', 'bmp', 'gif'] as const;
/** Containers of audio and video jobs, indexed by the same `format` code (6 onwards). */
export const MEDIA_FORMAT_NAMES = [...FORMAT_NAMES, 'mp4', 'matroska', 'mp3', 'aac', 'wav', 'flac', 'ogg'] as const;
export const CODEC_NAMES = ['other', 'h264', 'vp8', 'vp9', 'mp3', 'aac', 'pcm', 'flac', 'opus', 'vorbis', 'hevc', 'av1'] as const;

/** The largest block the pool allocates (wasm's malloc takes 32 bits): a batch buffer, a decode target. */
export const MAX_BATCH_BYTES = 0x7fffffff;
