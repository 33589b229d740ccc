/* Audio and video jobs.
 *
 * libavformat reads through a custom AVIOContext (io.c): a whole file in wasm memory (job->src,
 * src_len), or for streamed video a window that JS refills on request; nothing touches a filesystem.
 * Every decoder runs with one thread (parallelism is one item per pool thread; a decoder that
 * started its own pthreads could deadlock a pool sized for the items). Every path out of a job
 * goes through one cleanup block, so a failure leaks nothing. */
#include "media.h"
#include "container.h"
#include "fail.h"
#include "io.h"
#include "packets.h"
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/mathematics.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>

#define MAX_BAD_PACKETS_IN_A_ROW 32
#define MAX_OUTPUT_RATE          384000
#define MAX_SOURCE_RATE          768000
#define SEEK_GAP_MS              1000

/* A time in ms from the stream's start, as a timestamp in its time base. */
static int64_t stream_ts(const media *m, int64_t ms) { return ts_add(m->start, av_rescale_q(ms, (AVRational){1, 1000}, m->tb)); }

static int media_open_decoder(media *m, td_job *job) {
  const AVCodecParameters *par = m->st->codecpar;
  const AVCodec *codec = avcodec_find_decoder(par->codec_id);
  if (!codec) return td_fail(job, TD_E_UNKNOWN_FORMAT, 0, "no decoder for this codec in the module");
  m->dec = avcodec_alloc_context3(codec);
  if (!m->dec) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate a decoder");
  int r = avcodec_parameters_to_context(m->dec, par);
  if (r < 0) return td_fail(job, TD_E_CORRUPT, r, "invalid codec parameters");
  td_limit_decoder(m->dec, job);
  if ((r = td_check_decodable(m->dec, job)) != TD_OK) return r;
  m->dec->pkt_timebase = m->st->time_base;
  r = avcodec_open2(m->dec, codec, NULL);
  if (r < 0) return td_fail(job, r == AVERROR(ENOMEM) ? TD_E_NOMEM : TD_E_CORRUPT, r, "the decoder rejected the stream parameters");
  return TD_OK;
}

/* The next decoded frame of the chosen stream into `frame`: 0, AVERROR_EOF at the end of the
 * stream, or the error that stopped it. Damaged packets are skipped, up to a run of them. */
static int next_frame(media *m, AVPacket *pkt, AVFrame *frame, int *draining) {
  int bad = 0;
  for (;;) {
    if (td_io_over_budget(&m->io)) return AVERROR_EXIT;
    int r = avcodec_receive_frame(m->dec, frame);
    if (r == 0) return 0;
    if (r == AVERROR_EOF && m->run_break) {
      m->run_break = 0;
      avcodec_flush_buffers(m->dec);
      continue;
    }
    if (r == AVERROR_EOF) return AVERROR_EOF;
    if (r != AVERROR(EAGAIN)) {
      if (r != AVERROR_INVALIDDATA || ++bad >= MAX_BAD_PACKETS_IN_A_ROW) return r;
      continue;
    }
    if (*draining) return AVERROR_EOF;
    r = m->fmt ? av_read_frame(m->fmt, pkt) : td_packets_next(m, pkt);
    if (r == TD_PACKETS_RUN_BREAK) {
      /* The frames of the run so far come out first (a drain), then the decoder starts afresh. */
      m->run_break = 1;
      r = avcodec_send_packet(m->dec, NULL);
      if (r < 0 && r != AVERROR_EOF) return r;
      continue;
    }
    if (r == AVERROR_EOF) {
      *draining = 1;
      r = avcodec_send_packet(m->dec, NULL);
      if (r < 0 && r != AVERROR_EOF) return r;
      continue;
    }
    if (r < 0) return r;
    if (m->st && pkt->stream_index != m->st->index) {
      av_packet_unref(pkt);
      continue;
    }
    if (m->first_dts == AV_NOPTS_VALUE) m->first_dts = pkt->dts != AV_NOPTS_VALUE ? pkt->dts : pkt->pts;
    if (m->wanted) m->dec->skip_frame = m->wanted(m->wanted_ctx, pkt->pts) ? AVDISCARD_DEFAULT : AVDISCARD_NONREF;
    r = avcodec_send_packet(m->dec, pkt);
    av_packet_unref(pkt);
    if (r == AVERROR_INVALIDDATA) {
      if (++bad >= MAX_BAD_PACKETS_IN_A_ROW) return r;
    } else if (r < 0) {
      return r;
    }
  }
}

/* ---- audio ------------------------------------------------------------------------------------ */

static uint32_t le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

/* libavformat clamps a WAV's declared data size to the bytes present, so a cut WAV would decode
 * as a shorter, valid one: compare the data chunk's declared size with the file here. */
static int wav_cut_short(const uint8_t *p, int64_t len) {
  if (len < 12 || memcmp(p, "RIFF", 4) || memcmp(p + 8, "WAVE", 4)) return 0;
  int64_t at = 12;
  while (at + 8 <= len) {
    uint32_t size = le32(p + at + 4);
    if (!memcmp(p + at, "data", 4)) return size != 0 && size != 0xFFFFFFFFu && at + 8 + (int64_t)size > len;
    at += 8 + (int64_t)size + (size & 1);
  }
  return at < len || at > len; /* the header itself ends mid-chunk */
}

/* A WAV's fmt chunk, read before libavformat sees the file: a sample rate or channel count over
 * the limits is refused as too large from the header alone (libavformat would otherwise turn an
 * absurd channel count into a vague "unspecified number of channels"). Returns the message to
 * fail with, or NULL. */
static const char *wav_declared_too_large(const uint8_t *p, int64_t len, char *why, size_t size) {
  if (len < 12 || memcmp(p, "RIFF", 4) || memcmp(p + 8, "WAVE", 4)) return NULL;
  for (int64_t at = 12; at + 8 <= len;) {
    uint32_t chunk = le32(p + at + 4);
    if (!memcmp(p + at, "fmt ", 4) && at + 16 <= len) {
      unsigned channels = p[at + 10] | p[at + 11] << 8;
      uint32_t rate = le32(p + at + 12);
      if (channels > TD_MAX_SOURCE_CHANNELS || rate > MAX_SOURCE_RATE) {
        snprintf(why, size, "the WAV declares %u Hz x %u channels, over the limit of %d Hz x %d", rate, channels, MAX_SOURCE_RATE,
                 TD_MAX_SOURCE_CHANNELS);
        return why;
      }
      return NULL;
    }
    at += 8 + (int64_t)chunk + (chunk & 1);
  }
  return NULL;
}

/* Drops up to *skip leading frames of the n just written at o (the offset the caller asked for
 * lands inside a decoded frame); returns how many frames remain. */
static int drop_leading(uint8_t *o, int n, int64_t *skip, size_t frame_bytes) {
  if (*skip <= 0) return n;
  int64_t k = *skip < n ? *skip : n;
  memmove(o, o + k * frame_bytes, (size_t)(n - k) * frame_bytes);
  *skip -= k;
  return n - (int)k;
}

/* One audio job, from its setup to its end. */
typedef struct audio_job {
  td_worker *w;
  td_job *job;
  media m;
  float *out;
  int64_t cap;            /* sample frames out holds */
  size_t frame_bytes;     /* one output sample frame */
  int64_t start_us;       /* the requested offset */
  int64_t written;        /* sample frames written to out */
  int64_t skip;           /* resampled frames still to drop before the offset */
  int64_t decoded_end_us; /* end of the last decoded input frame, from the stream's start */
  int started, draining, full;
  int in_format, in_rate, in_channels; /* the decoded format, fixed by the first frame kept */
  SwrContext *swr;
  AVChannelLayout out_layout, in_layout;
} audio_job;

/* The request itself and what the header alone shows: TD_OK or the failure. */
static int audio_check_request(td_job *job) {
  int ch = job->channels;
  if (!job->dst || ch < 1 || ch > TD_MAX_AUDIO_CHANNELS || job->sample_rate < 1 || job->sample_rate > MAX_OUTPUT_RATE ||
      job->max_frames <= 0 || (int64_t)job->max_frames * ch * 4 > INT_MAX || job->start_ms < 0)
    return td_fail(job, TD_E_BAD_REQUEST, 0, "invalid sample rate, channel count, frame capacity or offset");
  if (job->src_len <= 0) return td_fail(job, TD_E_EMPTY, 0, "empty input");
  char declared[112];
  if (wav_declared_too_large((const uint8_t *)(uintptr_t)job->src, job->src_len, declared, sizeof declared))
    return td_fail(job, TD_E_TOO_LARGE, 0, declared);
  if (wav_cut_short((const uint8_t *)(uintptr_t)job->src, job->src_len))
    return td_fail(job, TD_E_TRUNCATED, 0, "the WAV data chunk is longer than the file");
  return TD_OK;
}

/* Opens the file, its audio stream and decoder, checks the declared format against the limits and
 * seeks to the offset. */
static int audio_setup(audio_job *a) {
  td_job *job = a->job;
  media *m = &a->m;
  int st = media_open(m, job, AVMEDIA_TYPE_AUDIO);
  if (st == TD_OK) st = media_open_decoder(m, job);
  if (st != TD_OK) return st;
  job->src_rate = m->dec->sample_rate;
  job->src_channels = m->dec->ch_layout.nb_channels;
  if (job->src_rate <= 0 || job->src_channels <= 0) return td_fail(job, TD_E_CORRUPT, 0, "implausible sample rate or channel count");
  if (job->src_rate > MAX_SOURCE_RATE || job->src_channels > TD_MAX_SOURCE_CHANNELS) {
    char why[96];
    snprintf(why, sizeof why, "declared %d Hz x %d channels is over the limit of %d Hz x %d", job->src_rate, job->src_channels,
             MAX_SOURCE_RATE, TD_MAX_SOURCE_CHANNELS);
    return td_fail(job, TD_E_TOO_LARGE, 0, why);
  }
  if (a->start_us > 0) {
    /* Lands on a packet at or before the offset; samples before it are dropped as they come. */
    int64_t ts = ts_add(m->start, av_rescale_q(a->start_us, AV_TIME_BASE_Q, m->st->time_base));
    if (av_seek_frame(m->fmt, m->st->index, ts, AVSEEK_FLAG_BACKWARD) >= 0) avcodec_flush_buffers(m->dec);
  }
  return TD_OK;
}

/* The resampler, set up from the first frame kept (f, which starts at t_us): every later frame
 * must have its format. */
static int audio_start_resampler(audio_job *a, const AVFrame *f, int64_t t_us) {
  td_job *job = a->job;
  const int ch = job->channels;
  a->started = 1;
  a->in_format = f->format;
  a->in_rate = f->sample_rate;
  a->in_channels = f->ch_layout.nb_channels;
  if (a->in_rate <= 0 || a->in_channels <= 0 || a->in_channels > TD_MAX_SOURCE_CHANNELS)
    return td_fail(job, TD_E_CORRUPT, 0, "implausible decoded audio parameters");
  if (f->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || av_channel_layout_copy(&a->in_layout, &f->ch_layout) < 0)
    av_channel_layout_default(&a->in_layout, a->in_channels);
  int r = swr_alloc_set_opts2(&a->swr, &a->out_layout, AV_SAMPLE_FMT_FLT, job->sample_rate, &a->in_layout, f->format, a->in_rate, 0, NULL);
  /* Downmixes average (rows of the mixing matrix sum to at most 1, so nothing clips); mono is
   * copied to every output channel, as ML audio loaders do, not panned at -3 dB. */
  if (r >= 0) r = av_opt_set_double(a->swr, "rematrix_maxval", 1.0, 0);
  if (r >= 0 && a->in_channels == 1 && ch > 1) {
    double ones[TD_MAX_AUDIO_CHANNELS];
    for (int i = 0; i < ch; i++) ones[i] = 1.0;
    r = swr_set_matrix(a->swr, ones, 1);
  }
  if (r >= 0) r = swr_init(a->swr);
  if (r < 0) return td_fail(job, r == AVERROR(ENOMEM) ? TD_E_NOMEM : TD_E_CORRUPT, r, "cannot set up the resampler");
  /* Output sample 0 is at t_us; drop those before the requested offset. */
  a->skip = a->start_us > t_us ? av_rescale(ts_sub(a->start_us, t_us), job->sample_rate, AV_TIME_BASE) : 0;
  return TD_OK;
}

/* Resamples `count` input frames (in NULL: what the resampler holds back) after what is written,
 * dropping those before the offset. Returns swr_convert's count, before the drop. */
static int audio_resample(audio_job *a, const uint8_t **in, int count) {
  uint8_t *o = (uint8_t *)(a->out + a->written * a->job->channels);
  int n = swr_convert(a->swr, &o, (int)(a->cap - a->written), in, count);
  if (n <= 0) return n;
  a->written += drop_leading(o, n, &a->skip, a->frame_bytes);
  a->full = a->written >= a->cap;
  return n;
}

/* Decodes and resamples until the output is full or the stream ends. */
static int audio_decode(audio_job *a) {
  td_job *job = a->job;
  const AVRational tb = a->m.st->time_base;
  AVFrame *f = a->w->frame;
  while (!a->full) {
    int r = next_frame(&a->m, a->w->packet, f, &a->draining);
    if (r == AVERROR_EOF) break;
    if (r < 0) return media_read_failure(job, &a->m, r, "cannot decode the audio");
    int64_t pts = f->best_effort_timestamp;
    int64_t t_us = pts == AV_NOPTS_VALUE ? a->decoded_end_us : av_rescale_q(ts_sub(pts, a->m.start), tb, AV_TIME_BASE_Q);
    int64_t end_us = ts_add(t_us, av_rescale(f->nb_samples, AV_TIME_BASE, f->sample_rate > 0 ? f->sample_rate : 1));
    if (end_us > a->decoded_end_us) a->decoded_end_us = end_us;
    if (!a->started && end_us <= a->start_us) { /* wholly before the offset */
      av_frame_unref(f);
      continue;
    }
    if (!a->started) {
      int st = audio_start_resampler(a, f, t_us);
      if (st != TD_OK) return st;
    } else if (f->format != a->in_format || f->sample_rate != a->in_rate || f->ch_layout.nb_channels != a->in_channels) {
      return td_fail(job, TD_E_CORRUPT, 0, "the audio format changes mid-stream");
    }
    int n = audio_resample(a, (const uint8_t **)f->extended_data, f->nb_samples);
    av_frame_unref(f);
    if (n < 0) return td_fail(job, TD_E_CORRUPT, n, "resampling failed");
  }
  /* The resampler holds a few samples back; flush them at the end of the stream. */
  while (a->swr && !a->full && audio_resample(a, NULL, 0) > 0) {}
  return TD_OK;
}

/* The result: the frames written, unless the file turned out cut or held no audio. */
static int audio_finish(audio_job *a) {
  td_job *job = a->job;
  job->frames_out = (int32_t)a->written;
  /* Containers that index their samples declare an exact length: falling well short of it
   * means the file was cut. (MP3 and ADTS durations are estimates, so they are not judged.) */
  if (!a->full && job->duration_ms > 0 && job->format != TD_FORMAT_MP3 && job->format != TD_FORMAT_AAC && job->format != TD_FORMAT_OGG) {
    int64_t declared_us = (int64_t)job->duration_ms * 1000;
    int64_t slack = declared_us / 50 > 200000 ? declared_us / 50 : 200000;
    if (a->decoded_end_us + slack < declared_us) {
      char why[96];
      snprintf(why, sizeof why, "the audio ends at %lld ms of a declared %d ms", (long long)(a->decoded_end_us / 1000), job->duration_ms);
      return td_fail(job, TD_E_TRUNCATED, 0, why);
    }
  }
  if (!a->started && a->written == 0 && a->decoded_end_us == 0)
    return td_fail(job, a->m.io.wanted_past_end ? TD_E_TRUNCATED : TD_E_CORRUPT, 0, "no audio could be decoded");
  return TD_OK;
}

/* Every way out of a job that got past its request check: zeroes what was not written, so a clip
 * buffer never shows stale samples, and frees everything. */
static void audio_cleanup(audio_job *a, int st) {
  if (st != TD_OK) a->job->frames_out = 0;
  const int64_t kept = st == TD_OK ? a->written : 0;
  memset(a->out + kept * a->job->channels, 0, (size_t)(a->cap - kept) * a->frame_bytes);
  swr_free(&a->swr);
  av_channel_layout_uninit(&a->in_layout);
  av_channel_layout_uninit(&a->out_layout);
  media_close(&a->m, a->w);
}

int td_decode_audio(td_worker *w, td_job *job) {
  td_reset_result(job);
  int st = audio_check_request(job);
  if (st != TD_OK) return st;
  audio_job a = {
      .w = w,
      .job = job,
      .out = (float *)(uintptr_t)job->dst,
      .cap = job->max_frames,
      .frame_bytes = (size_t)job->channels * sizeof(float),
      .start_us = (int64_t)job->start_ms * 1000,
      .in_format = -1,
  };
  av_channel_layout_default(&a.out_layout, job->channels);
  st = audio_setup(&a);
  if (st == TD_OK) st = audio_decode(&a);
  if (st == TD_OK) st = audio_finish(&a);
  audio_cleanup(&a, st);
  return job->status = st == TD_OK ? TD_OK : job->status;
}

/* ---- video ------------------------------------------------------------------------------------ */

typedef struct target {
  int64_t key;  /* frame index, or time in ms from the stream's start */
  int32_t slot; /* where in the clip the frame goes */
  int32_t done;
} target;

static int by_key_then_slot(const void *a, const void *b) {
  const target *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->slot < y->slot ? -1 : x->slot > y->slot;
}

typedef struct clip {
  td_worker *w;
  td_job *job;
  const media *m;
  uint8_t *base;
  size_t slot_bytes;
  int32_t *pts_out;
  int written;
} clip;

static int emit(clip *c, const AVFrame *f, target *t) {
  uint8_t *slot = c->base + (size_t)t->slot * c->slot_bytes;
  int r = td_scale_frame(c->w, c->job, f, slot);
  if (r != TD_OK) return td_fail(c->job, r, 0, r == TD_E_BAD_REQUEST ? "crop box outside the frame" : "cannot scale the frame");
  if (c->job->flip) td_mirror_image(slot, c->job->dst_w, c->job->dst_h, c->job->channels);
  if (c->pts_out) {
    int64_t pts = f->best_effort_timestamp == AV_NOPTS_VALUE ? c->m->start : f->best_effort_timestamp;
    int64_t ms = av_rescale_q(ts_sub(pts, c->m->start), c->m->tb, (AVRational){1, 1000});
    c->pts_out[t->slot] = ms > INT_MAX ? INT_MAX : ms < INT_MIN ? INT_MIN : (int32_t)ms;
  }
  t->done = 1;
  c->written++;
  return TD_OK;
}

/* One video job, from its setup to its end. */
typedef struct video_job {
  td_worker *w;
  td_job *job;
  media m;
  clip c;
  target *targets; /* sorted by key, then slot */
  AVFrame *prev;   /* time modes: the last frame decoded, shown until the next one's time */
  AVRational fps;
  int n, mode;
  int j; /* targets[0..j) are emitted */
  int draining;
  int64_t index;    /* frames decoded so far (index mode) */
  int64_t last_pts; /* of the last frame decoded (time modes) */
  /* Gap seeks only ever move forward, past every timestamp already seen: damaged files whose
   * timestamps run backwards would otherwise seek back to the same keyframe forever. */
  int64_t reached;
  int seeks_left;
  /* A seek lands on the keyframe whose dts is at or before the wanted time; frames of the GOP
   * before it can still be shown at that time (reordered after their dts). When the first frame
   * out after a seek is later than the next target, the job steps back one keyframe. */
  int after_seek, step_backs_left;
} video_job;

/* The request itself: TD_OK or the failure. Marks every frame time unknown (-1). */
static int video_check_request(td_job *job) {
  const int n = job->max_frames, ch = job->channels, mode = job->select_mode;
  if (!job->dst || job->dst_w <= 0 || job->dst_h <= 0 || (ch != 1 && ch != 3 && ch != 4) || n <= 0 || n > TD_MAX_CLIP_FRAMES ||
      (int64_t)job->dst_w * job->dst_h * ch * n > INT_MAX || mode < TD_SELECT_INDICES || mode > TD_SELECT_FRAME_TIMES_MS ||
      (mode != TD_SELECT_RATE && !job->select) || (mode == TD_SELECT_RATE && job->fps_milli <= 0) || job->start_ms < 0 ||
      (job->crop_w > 0 && (job->crop_x < 0 || job->crop_y < 0 || job->crop_h <= 0)))
    return td_fail(job, TD_E_BAD_REQUEST, 0, "invalid clip size, channel count, frame selection or crop");
  const int32_t *select = (const int32_t *)(uintptr_t)job->select;
  if (mode != TD_SELECT_RATE)
    for (int i = 0; i < n; i++)
      if (select[i] < 0) return td_fail(job, TD_E_BAD_REQUEST, 0, "negative frame index or time");
  int32_t *pts_out = (int32_t *)(uintptr_t)job->pts_out;
  if (pts_out)
    for (int i = 0; i < n; i++) pts_out[i] = -1;
  if (job->kind != TD_KIND_VIDEO_STREAM && job->src_len <= 0) return td_fail(job, TD_E_EMPTY, 0, "empty input");
  if (job->kind == TD_KIND_VIDEO_PACKETS && mode != TD_SELECT_FRAME_TIMES_MS)
    return td_fail(job, TD_E_BAD_REQUEST, 0, "a packets job picks its frames by their own times");
  return TD_OK;
}

/* Frame-times mode: whether the frame at `pts` is one of the targets, whose keys are frames' own
 * times in whole µs (as the demuxer gives them) rounded up to the ms: the same integers here. A
 * packet without a pts is always decoded. */
static int video_wants(void *ctx, int64_t pts) {
  const video_job *v = ctx;
  if (pts == AV_NOPTS_VALUE) return 1;
  const int64_t us = av_rescale_q(ts_sub(pts, v->m.start), v->m.tb, (AVRational){1, 1000000});
  const int64_t ms = us >= 0 ? (us + 999) / 1000 : -1;
  int lo = 0, hi = v->n;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (v->targets[mid].key < ms)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < v->n && v->targets[lo].key == ms;
}

/* The frames wanted, in decoding order; the file, its video stream (checked against the pixel
 * limit) and its decoder. */
static int video_setup(video_job *v) {
  td_job *job = v->job;
  media *m = &v->m;
  v->targets = malloc((size_t)v->n * sizeof *v->targets);
  if (!v->targets) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate the frame list");
  const int32_t *select = (const int32_t *)(uintptr_t)job->select;
  for (int i = 0; i < v->n; i++) {
    int64_t key = v->mode == TD_SELECT_RATE ? job->start_ms + (int64_t)i * 1000000 / job->fps_milli : select[i];
    v->targets[i] = (target){key, i, 0};
  }
  qsort(v->targets, (size_t)v->n, sizeof *v->targets, by_key_then_slot);

  int st;
  if (job->kind == TD_KIND_VIDEO_PACKETS) {
    /* No container: the caller's packets and the parameters it read from the container's index. */
    st = td_packets_open(m, job);
    if (st != TD_OK) return st;
    v->fps = job->src_rate > 0 ? (AVRational){job->src_rate, 1000} : (AVRational){0, 1};
  } else {
    st = media_open(m, job, AVMEDIA_TYPE_VIDEO);
    if (st != TD_OK) return st;
    const AVCodecParameters *par = m->st->codecpar;
    job->src_w = par->width;
    job->src_h = par->height;
    st = td_check_declared_size(job);
    if (st != TD_OK) return st;
    v->fps = av_guess_frame_rate(m->fmt, m->st, NULL);
    job->src_rate = v->fps.num > 0 && v->fps.den > 0 ? (int32_t)av_rescale(v->fps.num, 1000, v->fps.den) : 0;
    st = media_open_decoder(m, job);
    if (st != TD_OK) return st;
  }
  v->prev = av_frame_alloc();
  if (!v->prev) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate a frame");
  if (v->mode == TD_SELECT_FRAME_TIMES_MS) {
    m->wanted = video_wants;
    m->wanted_ctx = v;
  }
  return TD_OK;
}

/* Index mode: the decoded frame `f` fills every target asking for its index. */
static int video_take_indexed(video_job *v, AVFrame *f) {
  while (v->j < v->n && v->targets[v->j].key == v->index) {
    int st = emit(&v->c, f, &v->targets[v->j]);
    if (st != TD_OK) return st;
    v->j++;
  }
  v->index++;
  av_frame_unref(f);
  return TD_OK;
}

/* Seeks the video stream to the keyframe at or before ts and starts the decoder afresh. */
static int video_seek(video_job *v, int64_t ts) {
  media *m = &v->m;
  if (av_seek_frame(m->fmt, m->st->index, ts, AVSEEK_FLAG_BACKWARD) < 0) return 0;
  avcodec_flush_buffers(m->dec);
  av_frame_unref(v->prev);
  m->first_dts = AV_NOPTS_VALUE;
  v->after_seek = 1;
  return 1;
}

/* The first frame out after a seek (at pts) is later than the next target: the target's frame
 * was in the GOP before, so seek to the keyframe before the one landed on. Returns 1 when it did
 * (the frame is then dropped). */
static int video_step_back(video_job *v, int64_t pts) {
  media *m = &v->m;
  v->after_seek = 0;
  if (v->step_backs_left <= 0 || m->first_dts == AV_NOPTS_VALUE || pts <= stream_ts(m, v->targets[v->j].key)) return 0;
  v->step_backs_left--;
  return video_seek(v, ts_sub(m->first_dts, 1));
}

/* Far from the next target (after a frame at pts) with a keyframe in between: seek instead of
 * decoding the gap. */
static void video_seek_gap(video_job *v, int64_t pts) {
  media *m = &v->m;
  const int64_t next_ts = stream_ts(m, v->targets[v->j].key);
  if (!m->fmt || ts_sub(next_ts, pts) <= av_rescale_q(SEEK_GAP_MS, (AVRational){1, 1000}, m->tb)) return;
  int e = avformat_index_get_entries_count(m->st) > 0 ? 0 : -1;
  const AVIndexEntry *key = e == 0 ? avformat_index_get_entry_from_timestamp(m->st, next_ts, AVSEEK_FLAG_BACKWARD) : NULL;
  /* Read the entry now: seeking can add index entries, which moves the array it lives in. */
  const int64_t key_ts = key ? key->timestamp : INT64_MIN;
  if (key && key_ts > v->reached && v->seeks_left > 0 && !v->draining && video_seek(v, next_ts)) {
    v->seeks_left--;
    v->reached = key_ts; /* the keyframe at or before the target comes first */
  }
}

/* Time modes: the frame shown at time t is the last one whose pts is <= t, so the frame decoded
 * (f) settles the targets before its pts, which show the frame before it; f then becomes prev. */
static int video_take_timed(video_job *v, AVFrame *f) {
  int64_t pts = f->best_effort_timestamp == AV_NOPTS_VALUE ? ts_add(v->last_pts, 1) : f->best_effort_timestamp;
  if (v->after_seek && video_step_back(v, pts)) {
    av_frame_unref(f);
    return TD_OK;
  }
  while (v->j < v->n && stream_ts(&v->m, v->targets[v->j].key) < pts) {
    int st = emit(&v->c, v->prev->buf[0] ? v->prev : f, &v->targets[v->j]);
    if (st != TD_OK) return st;
    v->j++;
  }
  v->last_pts = pts;
  if (pts > v->reached) v->reached = pts;
  av_frame_unref(v->prev);
  av_frame_move_ref(v->prev, f);
  if (v->j < v->n) video_seek_gap(v, pts);
  return TD_OK;
}

/* Decodes until every target has its frame or the stream ends. */
static int video_decode(video_job *v) {
  media *m = &v->m;
  AVFrame *f = v->w->frame;
  v->seeks_left = v->n + 8;
  v->step_backs_left = v->n + 8;
  if (m->fmt && v->mode != TD_SELECT_INDICES && v->targets[0].key > 0) video_seek(v, stream_ts(m, v->targets[0].key));
  int r = 0;
  while (v->j < v->n) {
    r = next_frame(m, v->w->packet, f, &v->draining);
    if (r < 0) break;
    int st = v->mode == TD_SELECT_INDICES ? video_take_indexed(v, f) : video_take_timed(v, f);
    if (st != TD_OK) return st;
  }
  if (r < 0 && r != AVERROR_EOF) return media_read_failure(v->job, m, r, "cannot decode the video");
  /* At the end: times within the last frame's display interval still show it. */
  if (v->mode != TD_SELECT_INDICES && v->prev->buf[0]) {
    const AVFrame *prev = v->prev;
    int64_t dur = prev->pkt_duration > 0 ? prev->pkt_duration : v->fps.num > 0 ? av_rescale_q(1, av_inv_q(v->fps), m->tb) : 0;
    while (v->j < v->n && stream_ts(m, v->targets[v->j].key) < ts_add(v->last_pts, dur)) {
      int st = emit(&v->c, v->prev, &v->targets[v->j]);
      if (st != TD_OK) return st;
      v->j++;
    }
  }
  return TD_OK;
}

/* The result: the frames emitted, unless targets are missing because the stream declared a size
 * over the limit or the file was cut, or nothing decoded at all. */
static int video_finish(video_job *v) {
  td_job *job = v->job;
  const media *m = &v->m;
  const int n = v->n, j = v->j, mode = v->mode;
  job->frames_out = v->c.written;
  /* Frames missing because the decoder refused the size a header declared (it skips such packets). */
  if (j < n && td_size_refused()) return td_fail(job, TD_E_TOO_LARGE, 0, "the stream declares a frame size over the pixel limit");
  if (j < n) {
    /* Frames the container says exist but the data did not hold: the file was cut. */
    int64_t declared = mode == TD_SELECT_INDICES ? (m->st && m->st->nb_frames > 0 ? m->st->nb_frames
                                                    : job->duration_ms > 0        ? (int64_t)job->duration_ms * job->src_rate / 1000000
                                                                                  : 0)
                                                 : job->duration_ms;
    int64_t margin = mode == TD_SELECT_INDICES ? 1 : job->src_rate > 0 ? 1000000 / job->src_rate : 0;
    if (v->targets[j].key + margin < declared) {
      char why[96];
      snprintf(why, sizeof why, "the data ends before %s %lld (declared %lld)", mode == TD_SELECT_INDICES ? "frame" : "ms",
               (long long)v->targets[j].key, (long long)declared);
      return td_fail(job, TD_E_TRUNCATED, 0, why);
    }
  }
  if (v->c.written == 0 && v->index == 0 && v->last_pts == INT64_MIN)
    return td_fail(job, m->io.wanted_past_end ? TD_E_TRUNCATED : TD_E_CORRUPT, 0, "no video frame could be decoded");
  return TD_OK;
}

/* Every way out of a job that got past its request check: slots without a frame are zeroed, so a
 * clip never shows stale pixels, and everything is freed. */
static void video_cleanup(video_job *v, int st) {
  const clip *c = &v->c;
  if (st != TD_OK) {
    v->job->frames_out = 0;
    if (c->pts_out)
      for (int i = 0; i < v->n; i++) c->pts_out[i] = -1;
  }
  for (int i = 0; v->targets && i < v->n; i++)
    if (st != TD_OK || !v->targets[i].done) memset(c->base + (size_t)v->targets[i].slot * c->slot_bytes, 0, c->slot_bytes);
  free(v->targets);
  av_frame_free(&v->prev);
  media_close(&v->m, v->w);
}

int td_decode_video(td_worker *w, td_job *job) {
  td_reset_result(job);
  int st = video_check_request(job);
  if (st != TD_OK) return st;
  video_job v = {
      .w = w,
      .job = job,
      .n = job->max_frames,
      .mode = job->select_mode,
      .last_pts = INT64_MIN,
      .reached = INT64_MIN,
  };
  const size_t slot_bytes = (size_t)job->dst_w * job->dst_h * job->channels;
  v.c = (clip){w, job, &v.m, (uint8_t *)(uintptr_t)job->dst, slot_bytes, (int32_t *)(uintptr_t)job->pts_out, 0};
  st = video_setup(&v);
  if (st == TD_OK) st = video_decode(&v);
  if (st == TD_OK) st = video_finish(&v);
  video_cleanup(&v, st);
  return job->status = st == TD_OK ? TD_OK : job->status;
}
