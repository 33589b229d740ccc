/* Video jobs over packets the caller cut from the container itself (TD_KIND_VIDEO_PACKETS): an
 * MP4's index, read in JS, gives every sample's bytes, times and key flag, so the job opens no
 * container. The decoder is opened from the parameters the index gave, and the packets are fed
 * in decode order, a run at a time (the decoder is drained and flushed between runs). */
#ifndef TANDEM_PACKETS_H
#define TANDEM_PACKETS_H
#include "container.h"

/* td_packets_next's answer, once, before the first packet of a run after the first: the caller
 * drains the decoder, flushes it, and asks again. */
#define TD_PACKETS_RUN_BREAK 1

/* Checks the job's packet table (every packet inside the input, finite times), its declared size
 * and duration against the limits, and opens the decoder; fills the results a video job reports
 * (format, codec, size, rate, duration). Returns TD_OK or the failure recorded in job. */
int td_packets_open(media *m, td_job *job);

/* The next packet into pkt (pointing into the job's input: avcodec_send_packet copies it), or
 * AVERROR_EOF after the last, or TD_PACKETS_RUN_BREAK. */
int td_packets_next(media *m, AVPacket *pkt);
#endif
