/* Video jobs over packets the caller cut from the container (packets.h). The input is the
 * caller's: every offset and size in the table is checked against it before any packet is read,
 * and the times must be finite; what the packets hold is the decoder's to judge, as in a file. */
#include "packets.h"
#include "fail.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <libavutil/pixdesc.h>

static enum AVCodecID codec_id(int code) {
  switch (code) {
    case TD_CODEC_H264: return AV_CODEC_ID_H264;
    case TD_CODEC_HEVC: return AV_CODEC_ID_HEVC;
    case TD_CODEC_AV1: return AV_CODEC_ID_AV1;
    case TD_CODEC_VP8: return AV_CODEC_ID_VP8;
    case TD_CODEC_VP9: return AV_CODEC_ID_VP9;
    default: return AV_CODEC_ID_NONE;
  }
}

static int check_table(td_job *job) {
  const int64_t len = job->src_len;
  const int64_t count = job->pk_count;
  if (count <= 0 || count > TD_MAX_DEMUX_PACKETS || job->pk_table < 0 || (job->pk_table & 7) ||
      job->pk_table + count * (int64_t)sizeof(td_packet) > len || job->pk_extradata < 0 || job->pk_extradata_len < 0 ||
      (int64_t)job->pk_extradata + job->pk_extradata_len > len)
    return td_fail(job, TD_E_BAD_REQUEST, 0, "the packet table or the extradata lies outside the input");
  const td_packet *table = (const td_packet *)(uintptr_t)(job->src + job->pk_table);
  for (int64_t i = 0; i < count; i++) {
    const td_packet *p = &table[i];
    if (p->offset < 0 || p->size <= 0 || (int64_t)p->offset + p->size > len || p->duration < 0 || !isfinite(p->pts) ||
        fabs(p->pts) > 9e15 || !(isnan(p->dts) || fabs(p->dts) <= 9e15))
      return td_fail(job, TD_E_BAD_REQUEST, 0, "a packet lies outside the input or has no usable time");
  }
  return TD_OK;
}

int td_packets_open(media *m, td_job *job) {
  memset(m, 0, sizeof *m);
  /* The reader is not read from: it carries the job's deadline, checked per packet. */
  if (td_io_init(&m->io, job) != 0) return td_fail(job, TD_E_BAD_REQUEST, 0, "a packets job reads from memory");
  int st = check_table(job);
  if (st != TD_OK) return st;
  job->format = TD_FORMAT_MP4;
  job->codec = job->pk_codec;
  job->src_w = job->pk_width;
  job->src_h = job->pk_height;
  job->src_rate = job->pk_rate_milli > 0 ? job->pk_rate_milli : 0;
  job->duration_ms = job->pk_duration_ms >= 0 ? job->pk_duration_ms : -1;
  if (job->max_duration_ms > 0 && job->duration_ms > job->max_duration_ms) {
    char why[96];
    snprintf(why, sizeof why, "declared duration %d ms is over the limit of %d ms", job->duration_ms, job->max_duration_ms);
    return td_fail(job, TD_E_TOO_LARGE, 0, why);
  }
  if (job->pk_width <= 0 || job->pk_height <= 0 || job->pk_timescale <= 0)
    return td_fail(job, TD_E_BAD_REQUEST, 0, "a packets job needs the coded size and the timescale");
  st = td_check_declared_size(job);
  if (st != TD_OK) return st;

  const enum AVCodecID id = codec_id(job->pk_codec);
  const AVCodec *codec = id == AV_CODEC_ID_NONE ? NULL : avcodec_find_decoder(id);
  if (!codec) return td_fail(job, TD_E_UNKNOWN_FORMAT, 0, "no decoder for this codec in the module");
  m->dec = avcodec_alloc_context3(codec);
  if (!m->dec) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate a decoder");
  AVCodecContext *d = m->dec;
  d->width = job->pk_width;
  d->height = job->pk_height;
  /* The container's colour tags, as the mov demuxer passes them on: values libavutil has no name
   * for become unspecified. */
  const int space = job->pk_color & 0xff, range = job->pk_color >> 8 & 0xff;
  const int primaries = job->pk_color >> 16 & 0xff, trc = job->pk_color >> 24 & 0xff;
  d->colorspace = av_color_space_name(space) ? (enum AVColorSpace)space : AVCOL_SPC_UNSPECIFIED;
  d->color_range = range <= AVCOL_RANGE_JPEG ? (enum AVColorRange)range : AVCOL_RANGE_UNSPECIFIED;
  d->color_primaries = av_color_primaries_name(primaries) ? (enum AVColorPrimaries)primaries : AVCOL_PRI_UNSPECIFIED;
  d->color_trc = av_color_transfer_name(trc) ? (enum AVColorTransferCharacteristic)trc : AVCOL_TRC_UNSPECIFIED;
  if (job->pk_extradata_len > 0) {
    d->extradata = av_mallocz((size_t)job->pk_extradata_len + AV_INPUT_BUFFER_PADDING_SIZE);
    if (!d->extradata) return td_fail(job, TD_E_NOMEM, AVERROR(ENOMEM), "cannot allocate the codec configuration");
    memcpy(d->extradata, (const uint8_t *)(uintptr_t)(job->src + job->pk_extradata), (size_t)job->pk_extradata_len);
    d->extradata_size = job->pk_extradata_len;
  }
  td_limit_decoder(d, job);
  st = td_check_decodable(d, job);
  if (st != TD_OK) return st;
  m->tb = (AVRational){1, job->pk_timescale};
  m->start = 0;
  d->pkt_timebase = m->tb;
  const int r = avcodec_open2(d, codec, NULL);
  if (r < 0) return td_fail(job, r == AVERROR(ENOMEM) ? TD_E_NOMEM : TD_E_CORRUPT, r, "the decoder rejected the stream parameters");
  m->packets = (const td_packet *)(uintptr_t)(job->src + job->pk_table);
  m->packet_data = (const uint8_t *)(uintptr_t)job->src;
  m->packet_count = job->pk_count;
  return TD_OK;
}

int td_packets_next(media *m, AVPacket *pkt) {
  if (m->next_packet >= m->packet_count) return AVERROR_EOF;
  const td_packet *p = &m->packets[m->next_packet];
  if ((p->flags & TD_PACKET_RUN) && m->next_packet > 0 && m->last_break != m->next_packet) {
    m->last_break = m->next_packet;
    return TD_PACKETS_RUN_BREAK;
  }
  av_packet_unref(pkt);
  /* No buf: avcodec_send_packet takes its own padded copy of the bytes. */
  pkt->data = (uint8_t *)m->packet_data + p->offset;
  pkt->size = p->size;
  pkt->pts = llrint(p->pts);
  pkt->dts = isnan(p->dts) ? AV_NOPTS_VALUE : llrint(p->dts);
  pkt->duration = p->duration;
  pkt->flags = p->flags & TD_PACKET_KEY ? AV_PKT_FLAG_KEY : 0;
  m->next_packet++;
  return 0;
}
