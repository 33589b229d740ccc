/* Opening a container for audio, video and demux jobs: libavformat over the job's reader (io.c),
 * its best stream of a kind, and the failure that a read error stands for. */
#ifndef TANDEM_CONTAINER_H
#define TANDEM_CONTAINER_H
#include <stdint.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include "image.h"
#include "io.h"
#include "tandem_decode.h"

/* Timestamp arithmetic that saturates: a damaged file's timestamps can be anywhere in int64, and a
 * plain sum or difference of two of them is undefined behaviour in C (found by fuzz-video). */
static inline int64_t ts_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}
static inline int64_t ts_sub(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

typedef struct media {
  td_io io;
  AVIOContext *avio;
  AVFormatContext *fmt;
  AVCodecContext *dec;
  AVStream *st;
  AVRational tb;     /* the stream's time base */
  int64_t start;     /* the stream's first timestamp, in its time base */
  int64_t first_dts; /* of the first packet sent since the job last set it to AV_NOPTS_VALUE (after a seek) */
  /* Packets jobs (no fmt, no st): the caller's packets in decode order, the next one to send, and
   * whether the decoder is being drained at a run's end before the next run's first packet. */
  const td_packet *packets;
  const uint8_t *packet_data;
  int packet_count, next_packet, run_break, last_break;
  /* When set, asked before each packet of the stream is decoded: 0 lets the decoder skip the
   * frame if no other frame references it (skip_frame = AVDISCARD_NONREF). */
  int (*wanted)(void *ctx, int64_t pts);
  void *wanted_ctx;
} media;

/* Opens the job's input, its container and its best stream of `type` (m->st, m->start), sets
 * job->format, job->codec and job->duration_ms and checks the declared duration against the limit.
 * Returns TD_OK or the failure recorded in job. */
int media_open(media *m, td_job *job, enum AVMediaType type);
/* TD_E_TOO_LARGE when job->src_w x src_h (the declared size) is over job->max_pixels. */
int td_check_declared_size(td_job *job);
/* The end of every media job (also after a failed media_open). */
void media_close(media *m, td_worker *w);
/* The failure a read error `r` stands for (budget, memory, source, size, cut or damaged file). */
int media_read_failure(td_job *job, const media *m, int r, const char *why);
#endif
