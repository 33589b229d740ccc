// The JS side of the job record shared with wasm/src/tandem_decode.h. Every field is one i32 word;
// the C side static-asserts the same layout, and loadDecodeModule checks the word count at start.

export const JOB_WORDS = 26;
export const JOB_MESSAGE_BYTES = 96;
export const JOB_BYTES = JOB_WORDS * 4 + JOB_MESSAGE_BYTES;
/** ffmpeg reads up to this many bytes past the input; they must exist and be zero. */
export const INPUT_PADDING = 64;

export const enum Field {
  State = 0, Status, Src, SrcLen, Dst, DstW, DstH, Channels, Fit, Filter, MaxPixels, AllowReduced,
  ApplyOrientation, CropX, CropY, CropW, CropH, PadValue,
  SrcW, SrcH, Format, ReducedLog2, Orientation, AvError, OnPoolThread, Next,
}

export const enum JobState { Idle = 0, Queued = 1, Done = 2 }

export const STATUS_CODES = [
  'ok', 'empty', 'unknown-format', 'too-large', 'truncated', 'corrupt', 'out-of-memory', 'bad-request',
] as const;

export const FIT_CODES = { stretch: 0, cover: 1, contain: 2 } as const;
export const FILTER_CODES = { bilinear: 0, bicubic: 1, area: 2, nearest: 3, lanczos: 4 } as const;
export const FORMAT_NAMES = ['unknown', 'jpeg', 'png', 'webp', 'bmp', 'gif'] as const;
