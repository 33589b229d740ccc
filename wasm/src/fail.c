/* What every job shares, image or media (fail.h): the result reset, the failure record with
 * libav's last logged error, the decoder limits, and the too-large signal from libav's size check.
 * The state is per thread: a pool thread runs one job at a time. */
#include "fail.h"
#include "io.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <libavcodec/avcodec.h>

static _Thread_local char last_log[96];
static _Thread_local int size_refused;

/* libav reports details through its logger; keep the last error line of this thread so a failed
 * job can say why, and stay silent otherwise. The line is only ever shown, never interpreted. */
static void log_to_thread(void *avcl, int level, const char *fmt, va_list vl) {
  (void)avcl;
  if (level > AV_LOG_ERROR) return;
  vsnprintf(last_log, sizeof last_log, fmt, vl);
}

void td_log_init_process(void) { av_log_set_callback(log_to_thread); }

/* Every decoder checks a frame size it read from the stream (an SPS, a VP9 frame header, an IHDR)
 * with av_image_check_size2 before allocating for it, and a refused one only shows as a log line
 * and a generic error (a video decoder even skips the packet and goes on). Tandem's libavutil calls
 * this hook from that check instead, so "too large" needs no log text. A zero side is a damaged
 * header, not a large one. Against a libavutil without the patch (the native bench's, Debian's)
 * the hook is never called, and such refusals report as corrupt or truncated. */
void tandem_av_image_size_refused(unsigned int w, unsigned int h, int64_t max_pixels) {
  (void)max_pixels;
  if (w > 0 && h > 0) size_refused = 1;
}

int td_size_refused(void) { return size_refused; }

void td_reset_result(td_job *job) {
  last_log[0] = 0;
  size_refused = 0;
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

int td_fail(td_job *job, int status, int av_error, const char *why) {
  job->status = status;
  job->av_error = av_error;
  const char *detail = last_log[0] ? last_log : "";
  snprintf(job->message, sizeof job->message, "%s%s%s", why, detail[0] ? ": " : "", detail);
  size_t n = strlen(job->message);
  while (n > 0 && (job->message[n - 1] == '\n' || job->message[n - 1] == ' ')) job->message[--n] = 0;
  return status;
}

static int checked_get_buffer(AVCodecContext *ctx, AVFrame *frame, int flags) {
  const td_job *job = ctx->opaque;
  if (ctx->codec_type == AVMEDIA_TYPE_VIDEO && (int64_t)frame->width * frame->height > job->max_pixels) return AVERROR(ERANGE);
  return avcodec_default_get_buffer2(ctx, frame, flags);
}

/* The module's dav1d decodes 8-bit AV1 only (its 16-bit code would add to every download): a
 * stream whose av1C says 10 or 12 bits fails here by name rather than as a decode error later.
 * Without an av1C the decoder's own error stands. */
int td_check_decodable(const AVCodecContext *ctx, td_job *job) {
  const uint8_t *x = ctx->extradata;
  if (ctx->codec_id == AV_CODEC_ID_AV1 && ctx->extradata_size >= 4 && (x[0] & 0x80) && (x[2] & 0x40))
    return td_fail(job, TD_E_UNKNOWN_FORMAT, 0, "AV1 at 10 or 12 bits: the module decodes 8-bit AV1 only");
  return TD_OK;
}

void td_limit_decoder(AVCodecContext *ctx, td_job *job) {
  ctx->thread_count = 1;
  ctx->max_pixels = job->max_pixels;
  ctx->opaque = job;
  ctx->get_buffer2 = checked_get_buffer;
}
