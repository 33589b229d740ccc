/* Demux jobs: the packets of a file's video stream, undecoded, for WebCodecs (bytes, times, key
 * flags and the decoder's configuration) and for clip samplers (every frame's exact time).
 *
 * The container is opened as for a video job (container.c), through the same reader, so streamed
 * input works the same way. The packets of a range start at a keyframe: the last one at or before
 * the range's start, found by a backward seek and then by keeping only what follows the last such
 * keyframe read. Reading stops at the first packet that decodes after the range's end (see
 * demux_take): every frame shown up to the end then decodes from what was returned.
 * Everything grows in bounded steps checked against the job's limits before it is allocated, and
 * every path out goes through demux_cleanup. */
#include "demux.h"
#include "container.h"
#include "fail.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavutil/mathematics.h>
#include <libavutil/pixdesc.h>

/* The result block is the caller's to free: in wasm with the module's free(); natively (the fuzz
 * harness) the job record holds 32-bit pointers, so the harness allocates it below 4 GiB. */
#ifdef __EMSCRIPTEN__
#define result_realloc realloc
#define result_free    free
#else
void *td_native_result_realloc(void *p, size_t n);
void td_native_result_free(void *p);
#define result_realloc td_native_result_realloc
#define result_free    td_native_result_free
#endif

#define MAX_EXTRADATA   (1 << 20)
#define FIRST_PACKETS   1024
#define FIRST_DATA      (256 << 10)
#define ENTRY_BYTES     (3 * 8 + 2 * 4 + 1) /* one packet's share of the table */
#define TRUNCATED_SLACK 200000              /* µs a stream may end short of its declared duration */

typedef struct entry {
  double pts_us, dts_us, duration_us;
  uint32_t offset, size;
  uint8_t key;
} entry;

typedef struct demux_job {
  td_worker *w;
  td_job *job;
  media m;
  entry *entries;
  int64_t n, cap;
  uint8_t *data; /* becomes the result block */
  int64_t len, data_cap;
  double start_us, end_us; /* end_us: INFINITY for no end */
  double last_end_us;      /* latest pts + duration read, against a cut file */
  int64_t late;            /* packets read so far that are shown after the range's end */
} demux_job;

/* A timestamp of the stream in µs from its start; NaN for none. */
static double to_us(const media *m, int64_t ts) {
  if (ts == AV_NOPTS_VALUE) return NAN;
  return (double)av_rescale_q(ts_sub(ts, m->start), m->st->time_base, (AVRational){1, 1000000});
}

static int demux_check_request(td_job *job) {
  if (job->start_ms < 0 || job->end_ms < -1 || (job->end_ms >= 0 && job->end_ms < job->start_ms) || job->max_packets < 1 ||
      job->max_packets > TD_MAX_DEMUX_PACKETS || job->max_bytes < 0 || job->max_bytes > TD_MAX_DEMUX_BYTES || job->max_pixels <= 0)
    return td_fail(job, TD_E_BAD_REQUEST, 0, "invalid range, packet or byte limit, or pixel limit");
  if (job->kind == TD_KIND_VIDEO_DEMUX && job->src_len <= 0) return td_fail(job, TD_E_EMPTY, 0, "empty input");
  return TD_OK;
}

/* The file, its video stream and what WebCodecs needs to configure a decoder for it. */
static int demux_setup(demux_job *d) {
  td_job *job = d->job;
  media *m = &d->m;
  int st = media_open(m, job, AVMEDIA_TYPE_VIDEO);
  if (st != TD_OK) return st;
  const AVCodecParameters *par = m->st->codecpar;
  job->src_w = par->width;
  job->src_h = par->height;
  if ((int64_t)par->width * par->height > job->max_pixels) {
    char why[96];
    snprintf(why, sizeof why, "declared size %dx%d is over the limit of %d pixels", par->width, par->height, job->max_pixels);
    return td_fail(job, TD_E_TOO_LARGE, 0, why);
  }
  AVRational fps = av_guess_frame_rate(m->fmt, m->st, NULL);
  job->src_rate = fps.num > 0 && fps.den > 0 ? (int32_t)av_rescale(fps.num, 1000, fps.den) : 0;
  job->profile = par->profile;
  job->level = par->level;
  const AVPixFmtDescriptor *pix = par->format >= 0 ? av_pix_fmt_desc_get(par->format) : NULL;
  job->bit_depth = pix ? pix->comp[0].depth : 0;
  job->color_space = par->color_space;
  job->color_primaries = par->color_primaries;
  job->color_trc = par->color_trc;
  /* The yuvj formats are full range whatever the stream says, as the wasm decode takes them. */
  const int yuvj = par->format == AV_PIX_FMT_YUVJ420P || par->format == AV_PIX_FMT_YUVJ422P || par->format == AV_PIX_FMT_YUVJ444P ||
                   par->format == AV_PIX_FMT_YUVJ440P || par->format == AV_PIX_FMT_YUVJ411P;
  job->color_range = yuvj ? AVCOL_RANGE_JPEG : par->color_range;
  if (par->extradata_size < 0 || par->extradata_size > MAX_EXTRADATA)
    return td_fail(job, TD_E_CORRUPT, 0, "implausible codec configuration size");
  d->start_us = (double)job->start_ms * 1000;
  d->end_us = job->end_ms < 0 ? INFINITY : (double)job->end_ms * 1000;
  if (job->start_ms > 0) {
    int64_t ts = ts_add(m->start, av_rescale_q(job->start_ms, (AVRational){1, 1000}, m->st->time_base));
    av_seek_frame(m->fmt, m->st->index, ts, AVSEEK_FLAG_BACKWARD); /* on failure: read from where it is */
  }
  return TD_OK;
}

/* Room for one more packet of `size` bytes, within the job's limits. */
static int demux_reserve(demux_job *d, int size) {
  td_job *job = d->job;
  if (d->n >= job->max_packets) {
    char why[96];
    snprintf(why, sizeof why, "the range holds more than maxPackets (%d) packets", job->max_packets);
    return td_fail(job, TD_E_TOO_LARGE, 0, why);
  }
  if (d->n == d->cap) {
    int64_t cap = d->cap ? d->cap * 2 : FIRST_PACKETS;
    if (cap > job->max_packets) cap = job->max_packets;
    entry *grown = realloc(d->entries, (size_t)cap * sizeof *grown);
    if (!grown) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot grow the packet table");
    d->entries = grown;
    d->cap = cap;
  }
  if (!job->demux_bytes) return TD_OK;
  if (d->len + size > job->max_bytes) {
    char why[96];
    snprintf(why, sizeof why, "the range holds more than maxBytes (%d) of packet data", job->max_bytes);
    return td_fail(job, TD_E_TOO_LARGE, 0, why);
  }
  if (d->len + size > d->data_cap) {
    int64_t cap = d->data_cap ? d->data_cap * 2 : FIRST_DATA;
    if (cap < d->len + size) cap = d->len + size;
    if (cap > job->max_bytes) cap = job->max_bytes;
    uint8_t *grown = result_realloc(d->data, (size_t)cap);
    if (!grown) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot grow the packet data");
    d->data = grown;
    d->data_cap = cap;
  }
  return TD_OK;
}

/* Takes one packet of the video stream; *stop is set at the first one past the range. */
static int demux_take(demux_job *d, const AVPacket *pkt, int *stop) {
  double dts = to_us(&d->m, pkt->dts), pts = to_us(&d->m, pkt->pts);
  if (isnan(pts)) pts = dts; /* a packet without a pts is shown at its dts */
  /* Past the end: a dts past it (every later packet decodes later still), or, for a packet without
   * one, more packets shown after the end than the stream reorders frames by (with a reorder
   * depth of k, a frame shown by the end follows at most k such packets in decode order). */
  if (pts > d->end_us) d->late++;
  if (isnan(dts) ? d->late > d->m.st->codecpar->video_delay : dts > d->end_us) {
    *stop = 1;
    return TD_OK;
  }
  const int key = (pkt->flags & AV_PKT_FLAG_KEY) != 0;
  if (key && pts <= d->start_us) d->n = d->len = d->late = 0; /* a later keyframe still at or before the start */
  if (d->n == 0 && !key) return TD_OK;                        /* the packets start at a keyframe */
  int st = demux_reserve(d, pkt->size);
  if (st != TD_OK) return st;
  const double duration = pkt->duration > 0 ? (double)av_rescale_q(pkt->duration, d->m.st->time_base, (AVRational){1, 1000000}) : 0;
  d->entries[d->n++] = (entry){pts, dts, duration, d->job->demux_bytes ? (uint32_t)d->len : 0, (uint32_t)pkt->size, (uint8_t)key};
  if (d->job->demux_bytes && pkt->size > 0) {
    memcpy(d->data + d->len, pkt->data, (size_t)pkt->size);
    d->len += pkt->size;
  }
  if (!isnan(pts) && pts + duration > d->last_end_us) d->last_end_us = pts + duration;
  return TD_OK;
}

static int demux_read(demux_job *d) {
  media *m = &d->m;
  AVPacket *pkt = d->w->packet;
  for (int stop = 0; !stop;) {
    if (td_io_over_budget(&m->io)) return media_read_failure(d->job, m, AVERROR_EXIT, "cannot read the packets");
    int r = av_read_frame(m->fmt, pkt);
    if (r == AVERROR_EOF) break;
    if (r < 0) return media_read_failure(d->job, m, r, "cannot read the packets");
    int st = pkt->stream_index == m->st->index ? demux_take(d, pkt, &stop) : TD_OK;
    av_packet_unref(pkt);
    if (st != TD_OK) return st;
  }
  td_job *job = d->job;
  if (d->n == 0) return td_fail(job, m->io.wanted_past_end ? TD_E_TRUNCATED : TD_E_CORRUPT, 0, "no video packet from a keyframe on");
  /* Packets ending well before the stream's declared duration (or the container's), and before
   * the range's end: the file was cut. */
  const AVStream *s = m->st;
  double declared_us = s->duration > 0        ? (double)av_rescale_q(s->duration, s->time_base, (AVRational){1, 1000000})
                       : job->duration_ms > 0 ? (double)job->duration_ms * 1000
                                              : 0;
  if (declared_us > d->end_us) declared_us = d->end_us;
  double slack = declared_us / 50 > TRUNCATED_SLACK ? declared_us / 50 : TRUNCATED_SLACK;
  if (m->io.wanted_past_end && d->last_end_us + slack < declared_us) {
    char why[96];
    snprintf(why, sizeof why, "the packets end at %.0f ms of a declared %.0f ms", d->last_end_us / 1000, declared_us / 1000);
    return td_fail(job, TD_E_TRUNCATED, 0, why);
  }
  return TD_OK;
}

/* Lays the table and the extradata out after the data, in the block the caller receives. */
static int demux_finish(demux_job *d) {
  td_job *job = d->job;
  const AVCodecParameters *par = d->m.st->codecpar;
  const int64_t extra = par->extradata_size, at = (d->len + extra + 7) & ~(int64_t)7;
  const int64_t total = at + d->n * ENTRY_BYTES;
  if (total > INT_MAX) return td_fail(job, TD_E_TOO_LARGE, 0, "the result is over 2 GiB");
  uint8_t *block = result_realloc(d->data, (size_t)total);
  if (!block) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate the result");
  d->data = block;
  if (extra > 0) memcpy(block + d->len, par->extradata, (size_t)extra);
  memset(block + d->len + extra, 0, (size_t)(at - d->len - extra));
  const int64_t n = d->n;
  double *pts = (double *)(block + at), *dts = pts + n, *dur = dts + n;
  uint32_t *offset = (uint32_t *)(dur + n), *size = offset + n;
  uint8_t *key = (uint8_t *)(size + n);
  for (int64_t i = 0; i < n; i++) {
    const entry *e = &d->entries[i];
    pts[i] = e->pts_us;
    dts[i] = e->dts_us;
    dur[i] = e->duration_us;
    offset[i] = e->offset;
    size[i] = e->size;
    key[i] = e->key;
  }
  job->frames_out = (int32_t)n;
  job->data_len = (int32_t)d->len;
  job->extradata_len = (int32_t)extra;
  job->result_len = (int32_t)total;
  job->result = (int32_t)(uintptr_t)block;
  d->data = NULL; /* the caller's now */
  return TD_OK;
}

static void demux_cleanup(demux_job *d, int st) {
  if (st != TD_OK) {
    d->job->frames_out = 0;
    d->job->result = d->job->result_len = d->job->data_len = d->job->extradata_len = 0;
  }
  result_free(d->data);
  free(d->entries);
  media_close(&d->m, d->w);
}

int td_demux_video(td_worker *w, td_job *job) {
  td_reset_result(job);
  job->result = job->result_len = job->data_len = job->extradata_len = 0;
  job->profile = job->level = -99;
  job->bit_depth = 0;
  job->color_space = AVCOL_SPC_UNSPECIFIED;
  job->color_primaries = AVCOL_PRI_UNSPECIFIED;
  job->color_trc = AVCOL_TRC_UNSPECIFIED;
  job->color_range = AVCOL_RANGE_UNSPECIFIED;
  int st = demux_check_request(job);
  if (st != TD_OK) return st;
  demux_job d = {.w = w, .job = job};
  st = demux_setup(&d);
  if (st == TD_OK) st = demux_read(&d);
  if (st == TD_OK) st = demux_finish(&d);
  demux_cleanup(&d, st);
  return job->status = st == TD_OK ? TD_OK : job->status;
}
