/* What every job shares, image or media: the result reset it starts with, the failure record
 * (with libav's last logged error), the limits its libavcodec decoders run under, and whether
 * libav refused a picture size the input declared. */
#ifndef TANDEM_FAIL_H
#define TANDEM_FAIL_H
#include <stdint.h>
#include "tandem_decode.h"

struct AVCodecContext;

/* Once per process, before any job: sends libav's log to this thread's capture (fail.c). */
void td_log_init_process(void);
/* The start of every job: clears this thread's captured log line and size refusal, bounds libav's
 * allocations by the job's pixel limit (td_bound_allocations) and resets every result field. */
void td_reset_result(td_job *job);
/* Records a failure in the job: status, libav's error code and `why`, followed by libav's last
 * logged error since the reset. Returns status. */
int td_fail(td_job *job, int status, int av_error, const char *why);
/* Whether libav refused a picture size the input declared since the job's reset: a size over the
 * job's pixel limit, or past what libav can address. */
int td_size_refused(void);
/* A decoder's limits, set before avcodec_open2: one thread (parallelism is one item per pool
 * thread), the job's pixel limit, which the decoder checks before it allocates a frame, and a
 * get_buffer2 that checks it again on every video frame and fails with AVERROR(ERANGE). */
void td_limit_decoder(struct AVCodecContext *ctx, td_job *job);
/* TD_OK, or the job's failure for a stream the module's decoders do not take (8-bit AV1 only). */
int td_check_decodable(const struct AVCodecContext *ctx, td_job *job);

/* Called by Tandem's libavutil (wasm/ffmpeg/size-refused-hook.patch) with every picture size
 * av_image_check_size2 refuses, on the refusing thread. Not for Tandem's own code. */
void tandem_av_image_size_refused(unsigned int w, unsigned int h, int64_t max_pixels);
#endif
