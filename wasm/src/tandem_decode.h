/* Tandem decode module: the C side of the contract with src/decode/abi.ts.
 *
 * A job is a fixed-size record in shared wasm memory. JS fills the request fields, calls
 * td_submit(), and waits (Atomics.waitAsync) on `state`; a pool thread decodes and writes the
 * result fields, then stores TD_STATE_DONE and notifies. All fields are 32-bit so JS can read
 * them through one Int32Array; offsets are checked by static asserts below and mirrored in abi.ts.
 */
#ifndef TANDEM_DECODE_H
#define TANDEM_DECODE_H
#include <stddef.h>
#include <stdint.h>

/* RUNNING: a pool thread has taken the job (JS's watchdog times a job from then on). */
enum td_state { TD_STATE_IDLE = 0, TD_STATE_QUEUED = 1, TD_STATE_DONE = 2, TD_STATE_RUNNING = 3 };

enum td_status {
  TD_OK = 0,
  TD_E_EMPTY = 1,          /* zero-length input */
  TD_E_UNKNOWN_FORMAT = 2, /* magic bytes match no supported image format */
  TD_E_TOO_LARGE = 3,      /* declared or decoded pixel count over the limit */
  TD_E_TRUNCATED = 4,      /* the data ends before the image does */
  TD_E_CORRUPT = 5,        /* the decoder rejected the data */
  TD_E_NOMEM = 6,          /* allocation failed inside the decoder or scaler */
  TD_E_BAD_REQUEST = 7,    /* the request itself is invalid (sizes, channels, crop) */
  TD_E_OVER_BUDGET = 8,    /* the job ran past its time limit or read far more than its input */
  TD_E_CANCELLED = 9,      /* the pool stopped before the job ran */
};

enum td_fit { TD_FIT_STRETCH = 0, TD_FIT_COVER = 1, TD_FIT_CONTAIN = 2 };
enum td_filter { TD_FILTER_BILINEAR = 0, TD_FILTER_BICUBIC = 1, TD_FILTER_AREA = 2, TD_FILTER_NEAREST = 3, TD_FILTER_LANCZOS = 4 };
enum td_format {
  TD_FORMAT_JPEG = 1,
  TD_FORMAT_PNG = 2,
  TD_FORMAT_WEBP = 3,
  TD_FORMAT_BMP = 4,
  TD_FORMAT_GIF = 5,
  /* containers of audio and video jobs */
  TD_FORMAT_MP4 = 6,
  TD_FORMAT_MATROSKA = 7,
  TD_FORMAT_MP3 = 8,
  TD_FORMAT_AAC = 9,
  TD_FORMAT_WAV = 10,
  TD_FORMAT_FLAC = 11,
  TD_FORMAT_OGG = 12
};

/* TD_KIND_VIDEO_STREAM: a video job whose `src` points to a td_stream instead of the file.
 * TD_KIND_VIDEO_DEMUX: the packets of the video stream without decoding them (demux.c); its
 * _STREAM form reads through a td_stream as TD_KIND_VIDEO_STREAM does.
 * TD_KIND_VIDEO_PACKETS: a video job over packets the caller cut from the container itself (an
 * MP4's index read in JS): `src` holds their bytes and a td_packet table, no container is opened
 * (packets.c). Frames are picked by TD_SELECT_FRAME_TIMES_MS only. */
enum td_kind {
  TD_KIND_IMAGE = 0,
  TD_KIND_AUDIO = 1,
  TD_KIND_VIDEO = 2,
  TD_KIND_VIDEO_STREAM = 3,
  TD_KIND_VIDEO_DEMUX = 4,
  TD_KIND_VIDEO_DEMUX_STREAM = 5,
  TD_KIND_VIDEO_PACKETS = 6
};
/* How a video job picks its frames; `select` holds max_frames values (indices or ms). */
/* TD_SELECT_FRAME_TIMES_MS: times as TD_SELECT_TIMES_MS, each promised to be a frame's own pts
 * (rounded up to the ms); a frame at none of them that no other frame references is skipped. */
enum td_select { TD_SELECT_INDICES = 0, TD_SELECT_TIMES_MS = 1, TD_SELECT_RATE = 2, TD_SELECT_FRAME_TIMES_MS = 3 };
enum td_codec {
  TD_CODEC_OTHER = 0,
  TD_CODEC_H264 = 1,
  TD_CODEC_VP8 = 2,
  TD_CODEC_VP9 = 3,
  TD_CODEC_MP3 = 4,
  TD_CODEC_AAC = 5,
  TD_CODEC_PCM = 6,
  TD_CODEC_FLAC = 7,
  TD_CODEC_OPUS = 8,
  TD_CODEC_VORBIS = 9,
  TD_CODEC_HEVC = 10,
  TD_CODEC_AV1 = 11
};

/* Upper bounds checked before anything is allocated. */
#define TD_MAX_CLIP_FRAMES     65536
#define TD_MAX_AUDIO_CHANNELS  8
#define TD_MAX_SOURCE_CHANNELS 64
#define TD_MAX_DEMUX_PACKETS   (1 << 24)
#define TD_MAX_DEMUX_BYTES     (1 << 30)

typedef struct td_job {
  int32_t state;  /* td_state; the word JS waits on */
  int32_t status; /* td_status */
  /* request: src must be followed by 64 zero bytes (AV_INPUT_BUFFER_PADDING_SIZE) */
  int32_t src; /* const uint8_t* */
  int32_t src_len;
  int32_t dst;                    /* uint8_t*, dst_h rows of dst_w*channels bytes */
  int32_t dst_w, dst_h, channels; /* channels: 1 gray, 3 RGB, 4 RGBA */
  int32_t fit, filter;
  int32_t max_pixels;                     /* limit on width*height as declared and as decoded */
  int32_t allow_reduced;                  /* 1: JPEG may decode at a reduced DCT scale M/8 when still >= target */
  int32_t apply_orientation;              /* 1: apply EXIF orientation */
  int32_t crop_x, crop_y, crop_w, crop_h; /* in oriented source pixels; crop_w == 0: no crop */
  int32_t pad_value;
  /* result */
  int32_t src_w, src_h;    /* oriented source size */
  int32_t format;          /* td_format */
  int32_t reduced_eighths; /* 1..8: the JPEG was decoded at this many eighths of its size (8: full) */
  int32_t orientation;     /* EXIF orientation found (1 when none) */
  int32_t av_error;        /* the libav error code behind a failure, 0 if none */
  int32_t on_pool_thread;  /* 1 when a pool pthread (not the caller's thread) decoded it */
  int32_t next;            /* queue link, owned by the pool */
  /* Audio and video jobs (image jobs leave these zero). Video reuses dst, dst_w, dst_h, channels,
   * fit, filter, max_pixels, crop_* and pad_value with their image meaning, per frame; audio reuses
   * dst (float*, interleaved) and channels (1..TD_MAX_AUDIO_CHANNELS, output channel count). */
  int32_t kind;            /* td_kind */
  int32_t sample_rate;     /* audio: output rate in Hz */
  int32_t max_frames;      /* audio: capacity of dst in sample frames; video: frames (NHWC slots) requested */
  int32_t start_ms;        /* audio: offset from the stream's start; video, fixed rate: time of the first frame */
  int32_t max_duration_ms; /* refuse streams declaring a longer duration (0: no limit) */
  int32_t select_mode;     /* video: td_select */
  int32_t select;          /* video: const int32_t*, max_frames frame indices or times in ms (unused for RATE) */
  int32_t fps_milli;       /* video, fixed rate: frames per 1000 s */
  int32_t pts_out;         /* video: int32_t*, max_frames presentation times in ms, -1 where none written (may be 0) */
  /* audio and video result */
  int32_t frames_out;   /* audio: sample frames written; video: frames written */
  int32_t src_rate;     /* audio: source sample rate; video: average frame rate in frames per 1000 s */
  int32_t src_channels; /* audio: source channel count */
  int32_t duration_ms;  /* duration declared by the container, -1 when unknown */
  int32_t codec;        /* td_codec */
  /* request, audio and video: wall-clock limit for the job in ms (0: none); checked per packet */
  int32_t time_limit_ms;
  /* request, images: RandomResizedCrop + RandomHorizontalFlip drawn from rrc_seed once the header
   * gives the size (crop.c); rrc_scale_hi == 0: off. Fractions and ratios in millionths. The box
   * drawn is written into crop_* (the crop is then stretched over the target, as torchvision's is)
   * and the flip into flipped. */
  int32_t rrc_seed;
  int32_t rrc_scale_lo, rrc_scale_hi; /* share of the image's area */
  int32_t rrc_ratio_lo, rrc_ratio_hi; /* width / height, drawn log-uniformly */
  int32_t flip_chance;                /* chance of a horizontal flip */
  int32_t flipped;                    /* result: 1 when the output was mirrored */
  /* request, JPEG: 1 decodes every pixel even where the output reads fewer (jpeg.c), for checking */
  int32_t window_off;
  /* result, images: the pixels decoded (a JPEG: the window the output reads, at its DCT scale;
   * otherwise the whole frame) out of the whole frame at that scale */
  int32_t decoded_w, decoded_h;
  int32_t frame_w, frame_h;
  /* result: microseconds of wall clock the thread spent on the job (its decode, not its wait in
   * the queue): summed over jobs against threads x elapsed, how busy the pool's threads were */
  int32_t thread_us;
  /* request, video: 1 mirrors every frame left to right after the resize (whole slot) */
  int32_t flip;
  /* Demux jobs (TD_KIND_VIDEO_DEMUX*). Request: start_ms (seek to the keyframe at or before it),
   * end_ms (stop at the first packet whose dts, or pts without one, is past it; -1: to the end),
   * max_duration_ms, time_limit_ms and max_pixels as video jobs; limits on packets and bytes; and
   * whether packet bytes are copied. Result: format, codec, src_w/src_h (coded size), src_rate,
   * duration_ms as video jobs, frames_out the packet count, and one malloc'd block the caller frees:
   *   data (data_len bytes) | extradata (extradata_len) | zero pad to 8 |
   *   f64 pts_us[n] | f64 dts_us[n] | f64 duration_us[n] | u32 offset[n] | u32 size[n] | u8 key[n]
   * with times in microseconds from the stream's start (NaN where none). */
  int32_t end_ms;
  int32_t max_packets; /* 1..TD_MAX_DEMUX_PACKETS */
  int32_t max_bytes;   /* 0..TD_MAX_DEMUX_BYTES of packet data */
  int32_t demux_bytes; /* 1: copy each packet's bytes into data; 0: times, flags and sizes only */
  int32_t result;      /* uint8_t*, the block above (0 on failure) */
  int32_t result_len;
  int32_t extradata_len;
  int32_t data_len;
  int32_t profile, level; /* codecpar->profile and level (negative: unknown) */
  int32_t bit_depth;      /* of the declared pixel format's first component (0: unknown) */
  /* result, demux: the stream's colour tags as libavcodec's enums (AVColorSpace, AVColorRange,
   * AVColorPrimaries, AVColorTransferCharacteristic); their UNSPECIFIED values when untagged */
  int32_t color_space, color_range, color_primaries, color_trc;
  /* Request, TD_KIND_VIDEO_PACKETS: what the container would have said (packets.c). Offsets are in
   * bytes from src: pk_table (8-aligned) holds pk_count td_packet in decode order, pk_extradata
   * pk_extradata_len bytes of codec configuration (an MP4's avcC payload, say). pk_codec is a
   * td_codec; pk_color packs AVColorSpace | AVColorRange << 8 | AVColorPrimaries << 16 |
   * AVColorTransferCharacteristic << 24. The job reports them back as a video job's results. */
  int32_t pk_table, pk_count, pk_extradata, pk_extradata_len;
  int32_t pk_codec, pk_width, pk_height, pk_duration_ms, pk_rate_milli, pk_color;
  int32_t pk_timescale; /* the packets' times count 1/pk_timescale s (an MP4 track's timescale) */
  char message[96];     /* NUL-terminated detail for failures */
} td_job;

#define TD_JOB_WORDS 81
_Static_assert(offsetof(td_job, message) == TD_JOB_WORDS * 4, "abi.ts mirrors this layout");
_Static_assert(offsetof(td_job, next) == 25 * 4, "image fields keep their offsets");
_Static_assert(offsetof(td_job, kind) == 26 * 4, "abi.ts mirrors this layout");
_Static_assert(offsetof(td_job, codec) == 39 * 4, "abi.ts mirrors this layout");
_Static_assert(offsetof(td_job, time_limit_ms) == 40 * 4, "abi.ts mirrors this layout");
_Static_assert(offsetof(td_job, flipped) == 47 * 4, "abi.ts mirrors this layout");
_Static_assert(offsetof(td_job, flip) == 54 * 4, "abi.ts mirrors this layout");
_Static_assert(offsetof(td_job, result) == 59 * 4, "abi.ts mirrors this layout");
_Static_assert(offsetof(td_job, color_space) == 66 * 4, "abi.ts mirrors this layout");
_Static_assert(offsetof(td_job, pk_table) == 70 * 4, "abi.ts mirrors this layout");
_Static_assert(sizeof(td_job) == TD_JOB_WORDS * 4 + 96, "abi.ts mirrors this layout");

/* One packet of a TD_KIND_VIDEO_PACKETS job: its bytes at src + offset, times in the job's
 * pk_timescale from the stream's start (whole numbers). TD_PACKET_RUN: the packet starts a new run (a keyframe after a gap in decode
 * order): the decoder is drained and flushed before it. */
enum td_packet_flags { TD_PACKET_KEY = 1, TD_PACKET_RUN = 2 };
typedef struct td_packet {
  int32_t offset, size, flags, duration;
  double pts, dts; /* dts NaN: none */
} td_packet;
_Static_assert(sizeof(td_packet) == 32, "src/decode/packets.ts mirrors this layout");

/* A streamed input: the pool thread asks for the bytes at an offset and blocks on `state` until
 * JS has written them into `buffer` (src/decode/stream.ts is the other side). */
enum td_stream_state { TD_STREAM_IDLE = 0, TD_STREAM_WANT = 1, TD_STREAM_FILLED = 2, TD_STREAM_CLOSED = 3 };
typedef struct td_stream {
  int32_t state;            /* td_stream_state; the word both sides wait on */
  int32_t want_lo, want_hi; /* file offset of the wanted bytes */
  int32_t want_len;         /* at most capacity */
  int32_t got_len;          /* bytes written to buffer from that offset; 0: the end; < 0: the source failed */
  int32_t size_lo, size_hi; /* total size; size_hi < 0 when unknown */
  int32_t buffer;           /* uint8_t*, the window */
  int32_t capacity;
} td_stream;
#define TD_STREAM_WORDS 9
_Static_assert(sizeof(td_stream) == TD_STREAM_WORDS * 4, "abi.ts mirrors this layout");

#endif
