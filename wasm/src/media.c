/* Audio and video jobs.
 *
 * libavformat reads through a custom AVIOContext (io.c): a whole file in wasm memory (job->src,
 * src_len), or for streamed video a window that JS refills on request; nothing touches a filesystem.
 * Every decoder runs with one thread (parallelism is one item per pool thread; a decoder that
 * started its own pthreads could deadlock a pool sized for the items). Every path out of a job
 * goes through one cleanup block, so a failure leaks nothing. */
#include "media.h"
#include "io.h"
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

#define IO_BUFFER_BYTES          32768
#define MAX_BAD_PACKETS_IN_A_ROW 32
#define MAX_OUTPUT_RATE          384000
#define MAX_SOURCE_RATE          768000
#define SEEK_GAP_MS              1000

/* Timestamp arithmetic that saturates: a damaged file's timestamps can be anywhere in int64, and a
 * plain sum or difference of two of them is undefined behaviour in C (found by fuzz-video). */
static int64_t ts_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}
static int64_t ts_sub(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

/* ---- opening a container and its best stream ------------------------------------------------- */

typedef struct media {
  td_io io;
  AVIOContext *avio;
  AVFormatContext *fmt;
  AVCodecContext *dec;
  AVStream *st;
  int64_t start; /* the stream's first timestamp, in its time base */
} media;

/* A time in ms from the stream's start, as a timestamp in its time base. */
static int64_t stream_ts(const media *m, int64_t ms) { return ts_add(m->start, av_rescale_q(ms, (AVRational){1, 1000}, m->st->time_base)); }

static void media_close(media *m) {
  avcodec_free_context(&m->dec);
  avformat_close_input(&m->fmt); /* leaves a custom pb alone */
  if (m->avio) {
    av_freep(&m->avio->buffer); /* probing may have replaced the buffer: free the current one */
    avio_context_free(&m->avio);
  }
}

static int format_code(const char *name) {
  if (!name) return 0;
  if (strstr(name, "mp4") || strstr(name, "mov")) return TD_FORMAT_MP4;
  if (strstr(name, "matroska") || strstr(name, "webm")) return TD_FORMAT_MATROSKA;
  if (!strcmp(name, "mp3")) return TD_FORMAT_MP3;
  if (!strcmp(name, "aac")) return TD_FORMAT_AAC;
  if (!strcmp(name, "wav")) return TD_FORMAT_WAV;
  if (!strcmp(name, "flac")) return TD_FORMAT_FLAC;
  if (!strcmp(name, "ogg")) return TD_FORMAT_OGG;
  return 0;
}

static int codec_code(enum AVCodecID id) {
  switch (id) {
    case AV_CODEC_ID_H264: return TD_CODEC_H264;
    case AV_CODEC_ID_VP8: return TD_CODEC_VP8;
    case AV_CODEC_ID_VP9: return TD_CODEC_VP9;
    case AV_CODEC_ID_MP3: return TD_CODEC_MP3;
    case AV_CODEC_ID_AAC: return TD_CODEC_AAC;
    case AV_CODEC_ID_FLAC: return TD_CODEC_FLAC;
    case AV_CODEC_ID_OPUS: return TD_CODEC_OPUS;
    case AV_CODEC_ID_VORBIS: return TD_CODEC_VORBIS;
    default: return id >= AV_CODEC_ID_FIRST_AUDIO && id < AV_CODEC_ID_ADPCM_IMA_QT ? TD_CODEC_PCM : TD_CODEC_OTHER;
  }
}

/* Read errors after the demuxer ran out of bytes mean a cut file; other errors, damaged data. */
static int read_failure(td_job *job, const media *m, int r, const char *why) {
  if (m->io.exceeded) return td_fail(job, TD_E_OVER_BUDGET, r, m->io.exceeded);
  if (r == AVERROR(ENOMEM))
    return td_fail(job, TD_E_NOMEM, r, "the file asks for a block of memory larger than the pixel limit allows, or memory ran out");
  if (m->io.source_failed) return td_fail(job, TD_E_CORRUPT, r, "the byte source failed");
  if (r == AVERROR(ERANGE)) return td_fail(job, TD_E_TOO_LARGE, r, "decoded frame over the pixel limit");
  if (td_size_refused()) return td_fail(job, TD_E_TOO_LARGE, r, "the stream declares a frame size over the pixel limit");
  return td_fail(job, m->io.wanted_past_end || r == AVERROR_EOF ? TD_E_TRUNCATED : TD_E_CORRUPT, r, why);
}

static int checked_get_buffer(AVCodecContext *ctx, AVFrame *frame, int flags) {
  const td_job *job = ctx->opaque;
  if (ctx->codec_type == AVMEDIA_TYPE_VIDEO && (int64_t)frame->width * frame->height > job->max_pixels) return AVERROR(ERANGE);
  return avcodec_default_get_buffer2(ctx, frame, flags);
}

static int media_open(media *m, td_job *job, enum AVMediaType type) {
  memset(m, 0, sizeof *m);
  if (td_io_init(&m->io, job) != 0) return td_fail(job, TD_E_BAD_REQUEST, 0, "streamed input needs the pthreads build and a window buffer");
  uint8_t *buffer = av_malloc(IO_BUFFER_BYTES);
  if (!buffer) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate the reader");
  m->avio = avio_alloc_context(buffer, IO_BUFFER_BYTES, 0, &m->io, td_io_read, NULL, td_io_seek);
  if (!m->avio) {
    av_free(buffer);
    return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate the reader");
  }
  const AVInputFormat *ifmt = NULL;
  int r = av_probe_input_buffer2(m->avio, &ifmt, NULL, NULL, 0, 0);
  if (m->io.exceeded) return read_failure(job, m, r, "cannot identify the container");
  if (r < 0 || !ifmt) return td_fail(job, TD_E_UNKNOWN_FORMAT, r, "not an MP4, WebM/MKV, MP3, AAC, WAV, FLAC or Ogg file");
  job->format = format_code(ifmt->name);
  m->fmt = avformat_alloc_context();
  if (!m->fmt) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate the demuxer");
  m->fmt->pb = m->avio;
  m->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
  m->fmt->interrupt_callback = (AVIOInterruptCB){td_io_over_budget, &m->io};
  r = avformat_open_input(&m->fmt, NULL, ifmt, NULL); /* frees and clears m->fmt on failure */
  if (r < 0) return read_failure(job, m, r, "cannot read the container header");

  unsigned n = m->fmt->nb_streams;
  AVDictionary **options = n ? av_calloc(n, sizeof *options) : NULL;
  if (n && !options) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate stream options");
  /* The decoders find_stream_info opens refuse frames over the job's pixel limit themselves,
   * before allocating them (they do not go through checked_get_buffer). */
  for (unsigned i = 0; i < n; i++) {
    av_dict_set(&options[i], "threads", "1", 0);
    av_dict_set_int(&options[i], "max_pixels", job->max_pixels, 0);
  }
  r = avformat_find_stream_info(m->fmt, options);
  for (unsigned i = 0; i < n; i++) av_dict_free(&options[i]);
  av_free(options);
  if (r < 0) return read_failure(job, m, r, "cannot read the stream parameters");

  int index = av_find_best_stream(m->fmt, type, -1, -1, NULL, 0);
  if (index < 0)
    return td_fail(job, TD_E_UNKNOWN_FORMAT, index,
                   type == AVMEDIA_TYPE_AUDIO ? "the file has no audio stream" : "the file has no video stream");
  m->st = m->fmt->streams[index];
  m->start = m->st->start_time != AV_NOPTS_VALUE ? m->st->start_time : 0;
  job->codec = codec_code(m->st->codecpar->codec_id);
  int64_t us = m->fmt->duration;
  if (us == AV_NOPTS_VALUE && m->st->duration != AV_NOPTS_VALUE) us = av_rescale_q(m->st->duration, m->st->time_base, AV_TIME_BASE_Q);
  job->duration_ms = us == AV_NOPTS_VALUE || us < 0 ? -1 : us / 1000 > INT_MAX ? INT_MAX : (int32_t)(us / 1000);
  if (job->max_duration_ms > 0 && job->duration_ms > job->max_duration_ms) {
    char why[96];
    snprintf(why, sizeof why, "declared duration %d ms is over the limit of %d ms", job->duration_ms, job->max_duration_ms);
    return td_fail(job, TD_E_TOO_LARGE, 0, why);
  }
  return TD_OK;
}

static int media_open_decoder(media *m, td_job *job) {
  const AVCodecParameters *par = m->st->codecpar;
  const AVCodec *codec = avcodec_find_decoder(par->codec_id);
  if (!codec) return td_fail(job, TD_E_UNKNOWN_FORMAT, 0, "no decoder for this codec in the module");
  m->dec = avcodec_alloc_context3(codec);
  if (!m->dec) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate a decoder");
  int r = avcodec_parameters_to_context(m->dec, par);
  if (r < 0) return td_fail(job, TD_E_CORRUPT, r, "invalid codec parameters");
  m->dec->thread_count = 1;
  m->dec->max_pixels = job->max_pixels;
  m->dec->pkt_timebase = m->st->time_base;
  m->dec->opaque = job;
  m->dec->get_buffer2 = checked_get_buffer;
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
    if (r == AVERROR_EOF) return AVERROR_EOF;
    if (r != AVERROR(EAGAIN)) {
      if (r != AVERROR_INVALIDDATA || ++bad >= MAX_BAD_PACKETS_IN_A_ROW) return r;
      continue;
    }
    if (*draining) return AVERROR_EOF;
    r = av_read_frame(m->fmt, pkt);
    if (r == AVERROR_EOF) {
      *draining = 1;
      r = avcodec_send_packet(m->dec, NULL);
      if (r < 0 && r != AVERROR_EOF) return r;
      continue;
    }
    if (r < 0) return r;
    if (pkt->stream_index != m->st->index) {
      av_packet_unref(pkt);
      continue;
    }
    r = avcodec_send_packet(m->dec, pkt);
    av_packet_unref(pkt);
    if (r == AVERROR_INVALIDDATA) {
      if (++bad >= MAX_BAD_PACKETS_IN_A_ROW) return r;
    } else if (r < 0) {
      return r;
    }
  }
}

static void reset_media_result(td_job *job) {
  td_clear_log();
  td_bound_allocations(job);
  job->status = TD_OK;
  job->av_error = 0;
  job->message[0] = 0;
  job->format = 0;
  job->codec = 0;
  job->frames_out = 0;
  job->src_rate = 0;
  job->src_channels = 0;
  job->duration_ms = -1;
  job->src_w = job->src_h = 0;
  job->reduced_eighths = 8;
  job->orientation = 1;
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

int td_decode_audio(td_worker *w, td_job *job) {
  reset_media_result(job);
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

  float *out = (float *)(uintptr_t)job->dst;
  const int64_t cap = job->max_frames;
  const size_t frame_bytes = (size_t)ch * sizeof(float);
  int64_t written = 0, skip = 0;
  int64_t decoded_end_us = 0; /* end of the last decoded input frame, from the stream's start */
  int started = 0, draining = 0, full = 0;
  int in_format = -1, in_rate = 0, in_channels = 0;
  SwrContext *swr = NULL;
  AVChannelLayout out_layout = {0}, in_layout = {0};
  av_channel_layout_default(&out_layout, ch);
  media m;
  int st = media_open(&m, job, AVMEDIA_TYPE_AUDIO);
  if (st == TD_OK) st = media_open_decoder(&m, job);
  if (st != TD_OK) goto done;
  job->src_rate = m.dec->sample_rate;
  job->src_channels = m.dec->ch_layout.nb_channels;
  if (job->src_rate <= 0 || job->src_channels <= 0) {
    st = td_fail(job, TD_E_CORRUPT, 0, "implausible sample rate or channel count");
    goto done;
  }
  if (job->src_rate > MAX_SOURCE_RATE || job->src_channels > TD_MAX_SOURCE_CHANNELS) {
    char why[96];
    snprintf(why, sizeof why, "declared %d Hz x %d channels is over the limit of %d Hz x %d", job->src_rate, job->src_channels,
             MAX_SOURCE_RATE, TD_MAX_SOURCE_CHANNELS);
    st = td_fail(job, TD_E_TOO_LARGE, 0, why);
    goto done;
  }
  const AVRational tb = m.st->time_base;
  const int64_t start_us = (int64_t)job->start_ms * 1000;
  if (start_us > 0) {
    /* Lands on a packet at or before the offset; samples before it are dropped below. */
    int64_t ts = ts_add(m.start, av_rescale_q(start_us, AV_TIME_BASE_Q, tb));
    if (av_seek_frame(m.fmt, m.st->index, ts, AVSEEK_FLAG_BACKWARD) >= 0) avcodec_flush_buffers(m.dec);
  }
  AVFrame *f = w->frame;
  while (!full) {
    int r = next_frame(&m, w->packet, f, &draining);
    if (r == AVERROR_EOF) break;
    if (r < 0) {
      st = read_failure(job, &m, r, "cannot decode the audio");
      goto done;
    }
    int64_t pts = f->best_effort_timestamp;
    int64_t t_us = pts == AV_NOPTS_VALUE ? decoded_end_us : av_rescale_q(ts_sub(pts, m.start), tb, AV_TIME_BASE_Q);
    int64_t end_us = ts_add(t_us, av_rescale(f->nb_samples, AV_TIME_BASE, f->sample_rate > 0 ? f->sample_rate : 1));
    if (end_us > decoded_end_us) decoded_end_us = end_us;
    if (!started && end_us <= start_us) {
      av_frame_unref(f);
      continue;
    } /* wholly before the offset */
    if (!started) {
      started = 1;
      in_format = f->format;
      in_rate = f->sample_rate;
      in_channels = f->ch_layout.nb_channels;
      if (in_rate <= 0 || in_channels <= 0 || in_channels > TD_MAX_SOURCE_CHANNELS) {
        st = td_fail(job, TD_E_CORRUPT, 0, "implausible decoded audio parameters");
        goto done;
      }
      if (f->ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || av_channel_layout_copy(&in_layout, &f->ch_layout) < 0)
        av_channel_layout_default(&in_layout, in_channels);
      r = swr_alloc_set_opts2(&swr, &out_layout, AV_SAMPLE_FMT_FLT, job->sample_rate, &in_layout, f->format, in_rate, 0, NULL);
      /* Downmixes average (rows of the mixing matrix sum to at most 1, so nothing clips); mono
       * is copied to every output channel, as ML audio loaders do, not panned at -3 dB. */
      if (r >= 0) r = av_opt_set_double(swr, "rematrix_maxval", 1.0, 0);
      if (r >= 0 && in_channels == 1 && ch > 1) {
        double ones[TD_MAX_AUDIO_CHANNELS];
        for (int i = 0; i < ch; i++) ones[i] = 1.0;
        r = swr_set_matrix(swr, ones, 1);
      }
      if (r >= 0) r = swr_init(swr);
      if (r < 0) {
        st = td_fail(job, r == AVERROR(ENOMEM) ? TD_E_NOMEM : TD_E_CORRUPT, r, "cannot set up the resampler");
        goto done;
      }
      /* Output sample 0 is at t_us; drop those before the requested offset. */
      skip = start_us > t_us ? av_rescale(ts_sub(start_us, t_us), job->sample_rate, AV_TIME_BASE) : 0;
    } else if (f->format != in_format || f->sample_rate != in_rate || f->ch_layout.nb_channels != in_channels) {
      st = td_fail(job, TD_E_CORRUPT, 0, "the audio format changes mid-stream");
      goto done;
    }
    uint8_t *o = (uint8_t *)(out + written * ch);
    int n = swr_convert(swr, &o, (int)(cap - written), (const uint8_t **)f->extended_data, f->nb_samples);
    av_frame_unref(f);
    if (n < 0) {
      st = td_fail(job, TD_E_CORRUPT, n, "resampling failed");
      goto done;
    }
    n = drop_leading(o, n, &skip, frame_bytes);
    written += n;
    full = written >= cap;
  }
  /* The resampler holds a few samples back; flush them at the end of the stream. */
  while (swr && !full) {
    uint8_t *o = (uint8_t *)(out + written * ch);
    int n = swr_convert(swr, &o, (int)(cap - written), NULL, 0);
    if (n <= 0) break;
    n = drop_leading(o, n, &skip, frame_bytes);
    written += n;
    full = written >= cap;
  }
  job->frames_out = (int32_t)written;
  /* Containers that index their samples declare an exact length: falling well short of it
   * means the file was cut. (MP3 and ADTS durations are estimates, so they are not judged.) */
  if (!full && job->duration_ms > 0 && job->format != TD_FORMAT_MP3 && job->format != TD_FORMAT_AAC && job->format != TD_FORMAT_OGG) {
    int64_t declared_us = (int64_t)job->duration_ms * 1000;
    int64_t slack = declared_us / 50 > 200000 ? declared_us / 50 : 200000;
    if (decoded_end_us + slack < declared_us) {
      char why[96];
      snprintf(why, sizeof why, "the audio ends at %lld ms of a declared %d ms", (long long)(decoded_end_us / 1000), job->duration_ms);
      st = td_fail(job, TD_E_TRUNCATED, 0, why);
      goto done;
    }
  }
  if (!started && written == 0 && decoded_end_us == 0) {
    st = td_fail(job, m.io.wanted_past_end ? TD_E_TRUNCATED : TD_E_CORRUPT, 0, "no audio could be decoded");
    goto done;
  }
done:
  if (st != TD_OK) job->frames_out = 0;
  /* Zero what was not written, so a clip buffer never shows stale samples. */
  memset(out + (st == TD_OK ? written : 0) * ch, 0, (size_t)(cap - (st == TD_OK ? written : 0)) * frame_bytes);
  swr_free(&swr);
  av_channel_layout_uninit(&in_layout);
  av_channel_layout_uninit(&out_layout);
  av_frame_unref(w->frame);
  av_packet_unref(w->packet);
  media_close(&m);
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
  int r = td_scale_frame(c->w, c->job, f, c->base + (size_t)t->slot * c->slot_bytes);
  if (r != TD_OK) return td_fail(c->job, r, 0, r == TD_E_BAD_REQUEST ? "crop box outside the frame" : "cannot scale the frame");
  if (c->pts_out) {
    int64_t pts = f->best_effort_timestamp == AV_NOPTS_VALUE ? c->m->start : f->best_effort_timestamp;
    int64_t ms = av_rescale_q(ts_sub(pts, c->m->start), c->m->st->time_base, (AVRational){1, 1000});
    c->pts_out[t->slot] = ms > INT_MAX ? INT_MAX : ms < INT_MIN ? INT_MIN : (int32_t)ms;
  }
  t->done = 1;
  c->written++;
  return TD_OK;
}

int td_decode_video(td_worker *w, td_job *job) {
  reset_media_result(job);
  const int n = job->max_frames, ch = job->channels, mode = job->select_mode;
  if (!job->dst || job->dst_w <= 0 || job->dst_h <= 0 || (ch != 1 && ch != 3 && ch != 4) || n <= 0 || n > TD_MAX_CLIP_FRAMES ||
      (int64_t)job->dst_w * job->dst_h * ch * n > INT_MAX || mode < TD_SELECT_INDICES || mode > TD_SELECT_RATE ||
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

  AVFrame *prev = NULL;
  target *targets = malloc((size_t)n * sizeof *targets);
  media m;
  memset(&m, 0, sizeof m);
  const size_t slot_bytes = (size_t)job->dst_w * job->dst_h * ch;
  clip c = {w, job, &m, (uint8_t *)(uintptr_t)job->dst, slot_bytes, pts_out, 0};
  int st;
  if (!targets) {
    st = td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate the frame list");
    goto done;
  }
  for (int i = 0; i < n; i++) {
    int64_t key = mode == TD_SELECT_RATE ? job->start_ms + (int64_t)i * 1000000 / job->fps_milli : select[i];
    targets[i] = (target){key, i, 0};
  }
  qsort(targets, (size_t)n, sizeof *targets, by_key_then_slot);

  st = media_open(&m, job, AVMEDIA_TYPE_VIDEO);
  if (st != TD_OK) goto done;
  const AVCodecParameters *par = m.st->codecpar;
  job->src_w = par->width;
  job->src_h = par->height;
  if ((int64_t)par->width * par->height > job->max_pixels) {
    char why[96];
    snprintf(why, sizeof why, "declared size %dx%d is over the limit of %d pixels", par->width, par->height, job->max_pixels);
    st = td_fail(job, TD_E_TOO_LARGE, 0, why);
    goto done;
  }
  AVRational fps = av_guess_frame_rate(m.fmt, m.st, NULL);
  job->src_rate = fps.num > 0 && fps.den > 0 ? (int32_t)av_rescale(fps.num, 1000, fps.den) : 0;
  st = media_open_decoder(&m, job);
  if (st != TD_OK) goto done;
  prev = av_frame_alloc();
  if (!prev) {
    st = td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate a frame");
    goto done;
  }

  const AVRational tb = m.st->time_base, ms_tb = {1, 1000};
  AVFrame *f = w->frame;
  int j = 0, draining = 0, r = 0;
  int64_t index = 0; /* frames decoded so far (index mode) */
  int64_t last_pts = INT64_MIN;
  /* Gap seeks only ever move forward, past every timestamp already seen: damaged files whose
   * timestamps run backwards would otherwise seek back to the same keyframe forever. */
  int64_t reached = INT64_MIN;
  int seeks_left = n + 8;
  if (mode != TD_SELECT_INDICES && targets[0].key > 0) {
    int64_t ts = stream_ts(&m, targets[0].key);
    if (av_seek_frame(m.fmt, m.st->index, ts, AVSEEK_FLAG_BACKWARD) >= 0) avcodec_flush_buffers(m.dec);
  }
  while (j < n) {
    r = next_frame(&m, w->packet, f, &draining);
    if (r < 0) break;
    if (mode == TD_SELECT_INDICES) {
      while (j < n && targets[j].key == index) {
        if ((st = emit(&c, f, &targets[j])) != TD_OK) goto done;
        j++;
      }
      index++;
      av_frame_unref(f);
      continue;
    }
    /* Time modes: the frame shown at time t is the last one whose pts is <= t. */
    int64_t pts = f->best_effort_timestamp == AV_NOPTS_VALUE ? ts_add(last_pts, 1) : f->best_effort_timestamp;
    while (j < n && stream_ts(&m, targets[j].key) < pts) {
      if ((st = emit(&c, prev->buf[0] ? prev : f, &targets[j])) != TD_OK) goto done;
      j++;
    }
    last_pts = pts;
    if (pts > reached) reached = pts;
    av_frame_unref(prev);
    av_frame_move_ref(prev, f);
    /* Far from the next target with a keyframe in between: seek instead of decoding the gap. */
    if (j < n) {
      int64_t next_ts = stream_ts(&m, targets[j].key);
      if (ts_sub(next_ts, pts) > av_rescale_q(SEEK_GAP_MS, ms_tb, tb)) {
        int e = avformat_index_get_entries_count(m.st) > 0 ? 0 : -1;
        const AVIndexEntry *key = e == 0 ? avformat_index_get_entry_from_timestamp(m.st, next_ts, AVSEEK_FLAG_BACKWARD) : NULL;
        /* Read the entry now: seeking can add index entries, which moves the array it lives in. */
        const int64_t key_ts = key ? key->timestamp : INT64_MIN;
        if (key && key_ts > reached && seeks_left > 0 && !draining &&
            av_seek_frame(m.fmt, m.st->index, next_ts, AVSEEK_FLAG_BACKWARD) >= 0) {
          seeks_left--;
          reached = key_ts;
          avcodec_flush_buffers(m.dec);
          av_frame_unref(prev); /* the keyframe at or before the target comes first */
        }
      }
    }
  }
  if (r < 0 && r != AVERROR_EOF) {
    st = read_failure(job, &m, r, "cannot decode the video");
    goto done;
  }
  /* At the end: times within the last frame's display interval still show it. */
  if (mode != TD_SELECT_INDICES && prev->buf[0]) {
    int64_t dur = prev->pkt_duration > 0 ? prev->pkt_duration : fps.num > 0 ? av_rescale_q(1, av_inv_q(fps), tb) : 0;
    while (j < n && stream_ts(&m, targets[j].key) < ts_add(last_pts, dur)) {
      if ((st = emit(&c, prev, &targets[j])) != TD_OK) goto done;
      j++;
    }
  }
  job->frames_out = c.written;
  /* Frames missing because the decoder refused the size a header declared (it skips such packets). */
  if (j < n && td_size_refused()) {
    st = td_fail(job, TD_E_TOO_LARGE, 0, "the stream declares a frame size over the pixel limit");
    goto done;
  }
  if (j < n) {
    /* Frames the container says exist but the data did not hold: the file was cut. */
    int64_t declared = mode == TD_SELECT_INDICES ? (m.st->nb_frames > 0    ? m.st->nb_frames
                                                    : job->duration_ms > 0 ? (int64_t)job->duration_ms * job->src_rate / 1000000
                                                                           : 0)
                                                 : job->duration_ms;
    int64_t margin = mode == TD_SELECT_INDICES ? 1 : job->src_rate > 0 ? 1000000 / job->src_rate : 0;
    if (targets[j].key + margin < declared) {
      char why[96];
      snprintf(why, sizeof why, "the data ends before %s %lld (declared %lld)", mode == TD_SELECT_INDICES ? "frame" : "ms",
               (long long)targets[j].key, (long long)declared);
      st = td_fail(job, TD_E_TRUNCATED, 0, why);
      goto done;
    }
  }
  if (c.written == 0 && index == 0 && last_pts == INT64_MIN) {
    st = td_fail(job, m.io.wanted_past_end ? TD_E_TRUNCATED : TD_E_CORRUPT, 0, "no video frame could be decoded");
    goto done;
  }
done:
  if (st != TD_OK) {
    job->frames_out = 0;
    if (pts_out)
      for (int i = 0; i < n; i++) pts_out[i] = -1;
  }
  /* Slots without a frame are zeroed, so a clip never shows stale pixels. */
  for (int i = 0; targets && i < n; i++)
    if (st != TD_OK || !targets[i].done) memset(c.base + (size_t)targets[i].slot * slot_bytes, 0, slot_bytes);
  free(targets);
  av_frame_free(&prev);
  av_frame_unref(w->frame);
  av_packet_unref(w->packet);
  media_close(&m);
  return job->status = st == TD_OK ? TD_OK : job->status;
}
