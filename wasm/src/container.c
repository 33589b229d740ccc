/* Opening a container and its best stream (container.h): shared by audio, video and demux jobs. */
#include "container.h"
#include "fail.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <libavcodec/avcodec.h>

#define IO_BUFFER_BYTES 32768

/* The end of every media job: drops what the worker's frame and packet still hold, then closes the
 * decoder, the demuxer and the reader. */
void media_close(media *m, td_worker *w) {
  av_frame_unref(w->frame);
  av_packet_unref(w->packet);
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

/* Tandem's codec code (td_codec) of a libavcodec id, decided id by id and never from where an id
 * falls in AVCodecID: the enum's order and blocks are ffmpeg's to change. PCM comes in some forty
 * ids (sample format, byte order, A-law, planar...); libavcodec names every one "pcm_<flavour>",
 * and its descriptor table holds every id, so a WAV whose PCM flavour the module has no decoder for
 * still reports pcm before it fails. */
static int codec_code(enum AVCodecID id) {
  switch (id) {
    case AV_CODEC_ID_H264: return TD_CODEC_H264;
    case AV_CODEC_ID_HEVC: return TD_CODEC_HEVC;
    case AV_CODEC_ID_AV1: return TD_CODEC_AV1;
    case AV_CODEC_ID_VP8: return TD_CODEC_VP8;
    case AV_CODEC_ID_VP9: return TD_CODEC_VP9;
    case AV_CODEC_ID_MP3: return TD_CODEC_MP3;
    case AV_CODEC_ID_AAC: return TD_CODEC_AAC;
    case AV_CODEC_ID_FLAC: return TD_CODEC_FLAC;
    case AV_CODEC_ID_OPUS: return TD_CODEC_OPUS;
    case AV_CODEC_ID_VORBIS: return TD_CODEC_VORBIS;
    default: break;
  }
  const AVCodecDescriptor *d = avcodec_descriptor_get(id);
  return d && d->type == AVMEDIA_TYPE_AUDIO && !strncmp(d->name, "pcm_", 4) ? TD_CODEC_PCM : TD_CODEC_OTHER;
}

/* Read errors after the demuxer ran out of bytes mean a cut file; other errors, damaged data. */
int media_read_failure(td_job *job, const media *m, int r, const char *why) {
  if (m->io.exceeded) return td_fail(job, TD_E_OVER_BUDGET, r, m->io.exceeded);
  if (r == AVERROR(ENOMEM))
    return td_fail(job, TD_E_NOMEM, r, "the file asks for a block of memory larger than the pixel limit allows, or memory ran out");
  if (m->io.source_failed) return td_fail(job, TD_E_CORRUPT, r, "the byte source failed");
  if (r == AVERROR(ERANGE)) return td_fail(job, TD_E_TOO_LARGE, r, "decoded frame over the pixel limit");
  if (td_size_refused()) return td_fail(job, TD_E_TOO_LARGE, r, "the stream declares a frame size over the pixel limit");
  return td_fail(job, m->io.wanted_past_end || r == AVERROR_EOF ? TD_E_TRUNCATED : TD_E_CORRUPT, r, why);
}

int td_check_declared_size(td_job *job) {
  if ((int64_t)job->src_w * job->src_h <= job->max_pixels) return TD_OK;
  char why[96];
  snprintf(why, sizeof why, "declared size %dx%d is over the limit of %d pixels", job->src_w, job->src_h, job->max_pixels);
  return td_fail(job, TD_E_TOO_LARGE, 0, why);
}

int media_open(media *m, td_job *job, enum AVMediaType type) {
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
  if (m->io.exceeded) return media_read_failure(job, m, r, "cannot identify the container");
  if (r < 0 || !ifmt) return td_fail(job, TD_E_UNKNOWN_FORMAT, r, "not an MP4, WebM/MKV, MP3, AAC, WAV, FLAC or Ogg file");
  job->format = format_code(ifmt->name);
  m->fmt = avformat_alloc_context();
  if (!m->fmt) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate the demuxer");
  m->fmt->pb = m->avio;
  m->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
  m->fmt->interrupt_callback = (AVIOInterruptCB){td_io_over_budget, &m->io};
  r = avformat_open_input(&m->fmt, NULL, ifmt, NULL); /* frees and clears m->fmt on failure */
  if (r < 0) return media_read_failure(job, m, r, "cannot read the container header");

  unsigned n = m->fmt->nb_streams;
  AVDictionary **options = n ? av_calloc(n, sizeof *options) : NULL;
  if (n && !options) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate stream options");
  /* The decoders find_stream_info opens refuse frames over the job's pixel limit themselves,
   * before allocating them (they do not go through td_limit_decoder's get_buffer2). */
  for (unsigned i = 0; i < n; i++) {
    av_dict_set(&options[i], "threads", "1", 0);
    av_dict_set_int(&options[i], "max_pixels", job->max_pixels, 0);
  }
  r = avformat_find_stream_info(m->fmt, options);
  for (unsigned i = 0; i < n; i++) av_dict_free(&options[i]);
  av_free(options);
  if (r < 0) return media_read_failure(job, m, r, "cannot read the stream parameters");

  int index = av_find_best_stream(m->fmt, type, -1, -1, NULL, 0);
  if (index < 0)
    return td_fail(job, TD_E_UNKNOWN_FORMAT, index,
                   type == AVMEDIA_TYPE_AUDIO ? "the file has no audio stream" : "the file has no video stream");
  m->st = m->fmt->streams[index];
  m->start = m->st->start_time != AV_NOPTS_VALUE ? m->st->start_time : 0;
  m->tb = m->st->time_base;
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
