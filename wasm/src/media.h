/* Audio and video jobs: a whole file in wasm memory, demuxed through a custom AVIOContext. */
#ifndef TANDEM_MEDIA_H
#define TANDEM_MEDIA_H
#include "image.h"
#include "tandem_decode.h"

/* Demuxes, decodes and resamples to f32 interleaved (job->sample_rate, job->channels) into
 * job->dst, at most job->max_frames sample frames from job->start_ms on. Returns job->status. */
int td_decode_audio(td_worker *w, td_job *job);
/* Decodes the frames picked by job->select_mode into consecutive dst_h x dst_w x channels slots
 * of job->dst, and their presentation times into job->pts_out. Returns job->status. */
int td_decode_video(td_worker *w, td_job *job);
#endif
