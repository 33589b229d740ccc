/* Per-thread decode state and the single-image entry point. */
#ifndef TANDEM_IMAGE_H
#define TANDEM_IMAGE_H
#include <stddef.h>
#include "tandem_decode.h"

struct AVFrame;
struct AVPacket;
struct SwsContext;

/* Reused across jobs by one pool thread, so the hot path allocates nothing per image beyond what
 * libavcodec allocates for the frame itself. */
typedef struct td_worker {
  struct AVFrame *frame;
  struct AVPacket *packet;
  struct SwsContext *sws;
  unsigned char *scratch; /* oriented images are scaled here, then rotated into place */
  size_t scratch_cap;
} td_worker;

void td_image_init_process(void);
int td_worker_init(td_worker *w);
void td_worker_free(td_worker *w);
/* Fills job's result fields; returns job->status. */
int td_decode_image(td_worker *w, td_job *job);
#endif
