/* Per-thread decode state and the single-image entry point. */
#ifndef TANDEM_IMAGE_H
#define TANDEM_IMAGE_H
#include <stddef.h>
#include "resize.h"
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
  struct td_jpeg *jpeg;  /* libjpeg-turbo decompressor, made on first use */
  unsigned char *pixels; /* JPEGs decode here (at their DCT-scaled size) before the resize */
  size_t pixels_cap;
  td_resizer resizer;       /* resizes those decoded pixels (bilinear) without libswscale */
  unsigned char *converted; /* a video frame's pixels as RGB or gray at their own size, before the resize */
  size_t converted_cap;
} td_worker;

int td_worker_init(td_worker *w);
void td_worker_free(td_worker *w);
/* Crops (job->crop_*), fits (job->fit, pad_value) and converts one decoded frame into `out`, a
 * dst_h x dst_w x channels u8 image, with the YUV matrix and range the frame is tagged with; no
 * orientation. Bilinear resizes go through resize.c (as JPEG images do), the other filters and
 * same-size output through one libswscale call. Returns TD_OK or a td_status. */
int td_scale_frame(td_worker *w, const td_job *job, const struct AVFrame *f, unsigned char *out);
/* Mirrors a h x w x ch image left to right, in place. */
void td_mirror_image(unsigned char *out, int w, int h, int ch);
/* Fills job's result fields; returns job->status. */
int td_decode_image(td_worker *w, td_job *job);
#endif
