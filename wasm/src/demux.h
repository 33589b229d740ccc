/* Demux jobs: a file's video packets, undecoded, with what a decoder needs to take them. */
#ifndef TANDEM_DEMUX_H
#define TANDEM_DEMUX_H
#include "image.h"
#include "tandem_decode.h"

/* Reads the packets of the best video stream in [start_ms, end_ms] from the keyframe at or before
 * start_ms into one block job->result (layout in tandem_decode.h), which the caller frees. */
int td_demux_video(td_worker *w, td_job *job);
#endif
