/* libFuzzer targets for Tandem's C job API (wasm/src), built natively with clang's AddressSanitizer
 * and UndefinedBehaviorSanitizer by wasm/fuzz/build.sh. One source, six targets chosen at compile
 * time: TD_FUZZ_IMAGE (td_decode_image), TD_FUZZ_VIDEO (td_decode_video), TD_FUZZ_PACKETS
 * (td_decode_video over a packets job: the input cut into packets, packets.c), TD_FUZZ_AUDIO
 * (td_decode_audio), TD_FUZZ_DEMUX (td_demux_video, whose result block it checks) and TD_FUZZ_STREAM (td_decode_video reading through the
 * streamed reader, io.c, built with TD_NATIVE_STREAM so that this harness answers its window requests in place of JS). The first 8 bytes of
 * an input choose the request (output size, channels, fit, filter, crop, frame selection, ...); the stream target takes 4 more that choose
 * how the source answers (window size, known or unknown size, short reads, a failure or a bogus length at some request); the rest is the
 * file.
 *
 * The job record holds 32-bit pointers (it mirrors wasm memory), so the buffers a job points at are
 * mapped below 4 GiB. ASan does not see into such mappings, so each buffer is placed to end exactly
 * at a page that is mapped with no access: reading the input past its padding, or writing the
 * output past its end, faults at once and libFuzzer reports it as a crash. One td_worker is reused
 * across inputs, as a pool thread reuses it across jobs, so state one input leaves behind is
 * exercised by the next. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../src/fail.h"
#include "../src/demux.h"
#include "../src/image.h"
#include "../src/io.h"
#include "../src/media.h"
#include "../src/tandem_decode.h"

#define PADDING    64 /* AV_INPUT_BUFFER_PADDING_SIZE: zero bytes after each input */
#define MAX_INPUT  (4 << 20)
#define MAX_OUTPUT (8 << 20)

/* A region below 4 GiB whose last `size` bytes end against a page with no access. */
typedef struct {
  uint8_t *base;
  size_t mapped;
} guarded;

static uint8_t *guarded_tail(guarded *g, size_t capacity, size_t size) {
  if (!g->base) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    g->mapped = (capacity + page - 1) / page * page + page;
    g->base = mmap(NULL, g->mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (g->base == MAP_FAILED) {
      perror("mmap(MAP_32BIT)");
      abort();
    }
    if (mprotect(g->base + g->mapped - page, page, PROT_NONE) != 0) {
      perror("mprotect");
      abort();
    }
  }
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  return g->base + g->mapped - page - size;
}

static guarded input_area, output_area, job_area, select_area, pts_area, stream_area, window_area;
static td_worker worker;

static int32_t ptr32(const void *p) { return (int32_t)(uintptr_t)p; }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  td_log_init_process();
  if (td_worker_init(&worker) != 0) abort();
  return 0;
}

#if defined(TD_FUZZ_DEMUX)
#define MAX_RESULT (8 << 20)
/* The demux job's result block, below 4 GiB as the record's 32-bit pointer needs: one block at a
 * time, growing in place inside one mapping (its end is the guard page's start). */
static guarded result_area;
void *td_native_result_realloc(void *p, size_t n);
void td_native_result_free(void *p);
void *td_native_result_realloc(void *p, size_t n) {
  uint8_t *base = guarded_tail(&result_area, MAX_RESULT, MAX_RESULT);
  if (p && p != base) abort(); /* only the one block */
  return n <= MAX_RESULT ? base : NULL;
}
void td_native_result_free(void *p) {
  if (p && p != guarded_tail(&result_area, MAX_RESULT, MAX_RESULT)) abort();
}

/* What JS reads from a finished demux job: a block of the size the counts give, packets back to
 * back inside the data, times ordered as the job promises, the first a keyframe. */
static void check_demux_result(const td_job *job) {
  if (job->status != TD_OK) {
    if (job->result || job->result_len || job->frames_out) abort();
    return;
  }
  const int64_t n = job->frames_out, at = ((int64_t)job->data_len + job->extradata_len + 7) & ~7;
  if (n < 1 || n > job->max_packets || job->data_len > job->max_bytes || job->result_len != at + n * 33) abort();
  const uint8_t *block = (const uint8_t *)(uintptr_t)job->result;
  double pts[1], dts[1];
  uint32_t offset, size, expected = 0;
  for (int64_t i = 0; i < n; i++) {
    memcpy(pts, block + at + i * 8, 8);
    memcpy(dts, block + at + (n + i) * 8, 8);
    memcpy(&offset, block + at + 24 * n + i * 4, 4);
    memcpy(&size, block + at + 28 * n + i * 4, 4);
    uint8_t key = block[at + 32 * n + i];
    if (key > 1 || (i == 0 && !key)) abort();
    if (job->demux_bytes) {
      if (offset != expected || (int64_t)offset + size > job->data_len) abort();
      expected += size;
    } else if (offset != 0) {
      abort();
    }
  }
  if (job->demux_bytes && expected != (uint32_t)job->data_len) abort();
}
#endif

#if defined(TD_FUZZ_PACKETS)
#define MAX_PACKETS 48
/* A packets job over the input: the file's bytes cut into packets at places drawn from the header
 * (the harness plays JS's part, so the table itself is well formed: offsets and sizes inside the
 * input, finite times; what the packets hold is the decoder's to judge), a codec from the header,
 * the input's first bytes as extradata, runs and key flags from the header's bits. The table is
 * placed after the bytes, 8-aligned, as src/decode/packets.ts lays out its block. */
static int packets_job(td_job *job, uint8_t *src, size_t len, const uint8_t *o) {
  static const int32_t codecs[] = {TD_CODEC_H264, TD_CODEC_HEVC, TD_CODEC_VP8, TD_CODEC_VP9, TD_CODEC_AV1};
  int n = 1 + o[5] % MAX_PACKETS;
  if (len < (size_t)n * 2) return 0;
  size_t table = (len + 7) & ~(size_t)7;
  const size_t total = table + (size_t)n * sizeof(td_packet);
  if (total > MAX_INPUT) return 0;
  /* The input moves down in its guarded area to make room for the table after it. */
  uint8_t *moved = guarded_tail(&input_area, MAX_INPUT + PADDING, total + PADDING);
  memmove(moved, src, len);
  src = moved;
  job->src = ptr32(src);
  memset(src + len, 0, table - len);
  td_packet *t = (td_packet *)(src + table);
  size_t extra = o[4] & 1 ? (size_t)(o[4] >> 1) % (len / 2 + 1) : 0;
  size_t at = extra, step = (len - extra) / (size_t)n;
  if (step == 0) return 0;
  uint32_t h = o[0] | o[1] << 8 | o[2] << 16 | (uint32_t)o[3] << 24;
  for (int i = 0; i < n; i++) {
    h = h * 1664525u + 1013904223u;
    size_t size = i == n - 1 ? len - at : step / 2 + h % step;
    if (size == 0 || at + size > len) size = len - at;
    if (size == 0) return 0;
    t[i] = (td_packet){(int32_t)at,
                       (int32_t)size,
                       (i == 0 || (h >> 24) % 5 == 0 ? TD_PACKET_KEY : 0) | ((h >> 16) % 7 == 0 ? TD_PACKET_RUN : 0),
                       40,
                       (double)(i * 40 + (h >> 8) % 3),
                       (double)(i * 40)};
    at += size;
    if (at >= len && i < n - 1) return 0;
  }
  memset(src + table + (size_t)n * sizeof(td_packet), 0, PADDING);
  job->kind = TD_KIND_VIDEO_PACKETS;
  job->src_len = (int32_t)(table + (size_t)n * sizeof(td_packet));
  job->select_mode = TD_SELECT_FRAME_TIMES_MS;
  int32_t *select = (int32_t *)(uintptr_t)job->select;
  for (int i = 0; i < job->max_frames; i++) select[i] = (int32_t)((i * (1 + o[6] % 3)) % n) * 40;
  job->pk_table = (int32_t)table;
  job->pk_count = n;
  job->pk_extradata = 0;
  job->pk_extradata_len = (int32_t)extra;
  job->pk_codec = codecs[o[7] % 5];
  job->pk_width = 16 + o[1] % 300;
  job->pk_height = 16 + o[2] % 300;
  job->pk_duration_ms = n * 40;
  job->pk_rate_milli = 25000;
  job->pk_color = o[3];
  job->pk_timescale = 1000;
  return 1;
}
#endif

#if defined(TD_FUZZ_STREAM)
#define HEADER     12
#define MAX_WINDOW (512 << 10)
/* The source behind the stream: the file in the input, answered as the knobs say. */
static struct {
  const uint8_t *file;
  int64_t size;
  uint8_t knobs; /* 1: size unknown; 2: short reads; 4: fail at request `fail_at`; 8: that failure is a bogus length */
  uint8_t fail_at;
  uint8_t salt;
  int requests;
} source;

void td_native_stream_answer(td_stream *s);
void td_native_stream_answer(td_stream *s) {
  /* What JS relies on: one request at a time, at a valid offset, for at most the window. */
  int64_t pos = ((int64_t)s->want_hi << 32) | (uint32_t)s->want_lo;
  if (s->state != TD_STREAM_WANT || pos < 0 || s->want_len <= 0 || s->want_len > s->capacity) abort();
  if (!(source.knobs & 1) && pos >= source.size) abort(); /* io.c answers reads past a known end itself */
  int request = source.requests++;
  int32_t got;
  if ((source.knobs & 4) && request == source.fail_at % 32) {
    got = source.knobs & 8 ? s->capacity + 1 + source.salt : -1;
  } else {
    int64_t left = pos < source.size ? source.size - pos : 0;
    got = left < s->want_len ? (int32_t)left : s->want_len;
    if ((source.knobs & 2) && got > 1) got = 1 + (int32_t)(((uint64_t)pos * 31 + source.salt) % (uint64_t)got);
    uint8_t *window = (uint8_t *)(uintptr_t)s->buffer;
    if (got > 0) memcpy(window, source.file + pos, (size_t)got);
  }
  s->got_len = got;
  s->state = TD_STREAM_FILLED;
}
#else
#define HEADER 8
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < HEADER || size - HEADER > MAX_INPUT) return -1;
  const uint8_t *o = data;
  size_t len = size - HEADER;
  uint8_t *src = guarded_tail(&input_area, MAX_INPUT + PADDING, len + PADDING);
  memcpy(src, data + HEADER, len);
  memset(src + len, 0, PADDING);

  td_job *job = (td_job *)guarded_tail(&job_area, sizeof(td_job), sizeof(td_job));
  memset(job, 0, sizeof *job);
  job->src = ptr32(src);
  job->src_len = (int32_t)len;
  job->max_pixels = 1 << 24;
  job->time_limit_ms = 2000;
  job->max_duration_ms = 24 * 3600 * 1000;

  size_t out_bytes;
#if defined(TD_FUZZ_AUDIO)
  job->kind = TD_KIND_AUDIO;
  job->channels = 1 + o[0] % TD_MAX_AUDIO_CHANNELS;
  static const int32_t rates[] = {8000, 16000, 22050, 44100, 48000, 96000, 11025, 192000};
  job->sample_rate = rates[o[1] % 8];
  job->max_frames = 1 + (o[2] | o[3] << 8) % 16384;
  job->start_ms = o[4] & 1 ? (o[5] % 64) * 100 : 0;
  out_bytes = (size_t)job->max_frames * job->channels * sizeof(float);
#elif defined(TD_FUZZ_DEMUX)
  job->kind = TD_KIND_VIDEO_DEMUX;
  job->start_ms = o[0] % 64 * 100;
  job->end_ms = o[1] ? job->start_ms + o[1] % 64 * 100 : -1;
  job->demux_bytes = o[2] & 1;
  job->max_packets = o[3] & 0x10 ? 1 + o[4] : 1 << 16;
  job->max_bytes = o[3] & 0x20 ? o[5] << 8 : 4 << 20;
  out_bytes = 0;
#else
  job->dst_w = 1 + o[0] % 96;
  job->dst_h = 1 + o[1] % 96;
  static const int32_t channels[] = {1, 3, 4, 3};
  job->channels = channels[o[2] & 3];
  job->fit = (o[2] >> 2) % 3;
  job->filter = (o[2] >> 4) % 5;
  job->allow_reduced = o[3] & 1;
  job->apply_orientation = (o[3] >> 1) & 1;
  job->pad_value = o[4];
  if (o[3] & 4) {
    job->crop_x = o[5] % 64;
    job->crop_y = o[6] % 64;
    job->crop_w = 1 + o[7] % 128;
    job->crop_h = 1 + o[5] % 128;
  }
  out_bytes = (size_t)job->dst_w * job->dst_h * job->channels;
#if defined(TD_FUZZ_VIDEO) || defined(TD_FUZZ_STREAM) || defined(TD_FUZZ_PACKETS)
  job->kind = TD_KIND_VIDEO;
  job->max_frames = 1 + o[6] % 8;
  job->select_mode = o[7] % 4; /* indices, times, a rate, frame times (skipping unreferenced frames) */
  int32_t *select = (int32_t *)guarded_tail(&select_area, 8 * 4, (size_t)job->max_frames * 4);
  for (int i = 0; i < job->max_frames; i++) select[i] = job->select_mode == TD_SELECT_INDICES ? i * (1 + o[4] % 5) : i * 150;
  job->select = ptr32(select);
  job->fps_milli = 1000 * (1 + o[4] % 30);
  job->pts_out = ptr32(guarded_tail(&pts_area, 8 * 4, (size_t)job->max_frames * 4));
  out_bytes *= (size_t)job->max_frames;
#else
  job->kind = TD_KIND_IMAGE;
  if (o[3] & 8) { /* a random crop instead of the crop box, with ranges from tiny to whole */
    job->crop_w = 0;
    job->rrc_seed = o[5] | o[6] << 8 | o[7] << 16;
    job->rrc_scale_lo = 1 + (o[4] % 100) * 10000;
    job->rrc_scale_hi = 1000000;
    job->rrc_ratio_lo = 100000 + (o[6] % 8) * 100000;
    job->rrc_ratio_hi = job->rrc_ratio_lo + (o[7] % 16) * 500000;
    job->flip_chance = (o[4] & 1) * 1000000;
  }
#endif
#endif
  uint8_t *dst = guarded_tail(&output_area, MAX_OUTPUT, out_bytes);
  job->dst = ptr32(dst);
#if defined(TD_FUZZ_STREAM)
  const uint8_t *k = data + 8;
  source.file = src;
  source.size = (int64_t)len;
  source.knobs = k[1];
  source.fail_at = k[2];
  source.salt = k[3];
  source.requests = 0;
  int32_t capacity = 4096 << (k[0] % 8);
  td_stream *stream = (td_stream *)guarded_tail(&stream_area, sizeof(td_stream), sizeof(td_stream));
  memset(stream, 0, sizeof *stream);
  stream->buffer = ptr32(guarded_tail(&window_area, MAX_WINDOW, (size_t)capacity));
  stream->capacity = capacity;
  stream->size_lo = (int32_t)(uint32_t)len;
  stream->size_hi = source.knobs & 1 ? -1 : 0;
  job->kind = TD_KIND_VIDEO_STREAM;
  job->src = ptr32(stream);
  job->src_len = 0;
#endif

#if defined(TD_FUZZ_PACKETS)
  if (!packets_job(job, src, len, o)) return -1;
#endif
#if defined(TD_FUZZ_AUDIO)
  int status = td_decode_audio(&worker, job);
#elif defined(TD_FUZZ_DEMUX)
  int status = td_demux_video(&worker, job);
  check_demux_result(job);
#elif defined(TD_FUZZ_VIDEO) || defined(TD_FUZZ_PACKETS)
  int status = td_decode_video(&worker, job);
#elif defined(TD_FUZZ_STREAM)
  int status = td_decode_video(&worker, job);
  td_stream_close(stream); /* as the pool's td_decode_job does after a streamed job */
#else
  int status = td_decode_image(&worker, job);
#endif
  /* The contract JS relies on: a known status, the same one in the record, a terminated message. */
  if (status < TD_OK || status > TD_E_CANCELLED || status != job->status) abort();
  if (memchr(job->message, 0, sizeof job->message) == NULL) abort();
  if (status == TD_OK && job->kind == TD_KIND_IMAGE && (job->src_w <= 0 || job->src_h <= 0)) abort();
  return 0;
}
