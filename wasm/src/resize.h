/* Separable, antialiased bilinear resize of 8-bit interleaved pixels: the triangle filter widened
 * by the downscale factor, as PIL's (and so torchvision's) BILINEAR resize does, in fixed point.
 * Used for decoded JPEGs instead of libswscale, whose RGB-to-RGB path goes through YUV. */
#ifndef TANDEM_RESIZE_H
#define TANDEM_RESIZE_H
#include <stddef.h>
#include <stdint.h>

/* Reused across calls by one thread: grow-only buffers, so the hot path does not allocate. */
typedef struct td_resizer {
  int32_t *taps;    /* per output column then per output row: first input index and count */
  int32_t *weights; /* the taps' fixed-point weights, max_taps per output sample */
  size_t taps_cap, weights_cap;
  uint8_t *rows; /* horizontal pass output: input rows x out_w x channels */
  size_t rows_cap;
  int32_t *acc; /* vertical pass accumulator: one output row */
  size_t acc_cap;
  int32_t *pairs; /* wasm SIMD: the weights again, split and paired for i32x4.dot_i16x8_s */
  size_t pairs_cap;
} td_resizer;

/* A source rectangle in pixels, fractional: output sample i of an axis is centred at
 * x + (i + 0.5) * w / out, so a crop of a resized image maps exactly (torchvision's Resize then
 * CenterCrop is one such rectangle of the original). */
typedef struct td_area {
  double x, y, w, h;
} td_area;

void td_resizer_free(td_resizer *r);
/* Resizes `area` of the in_w x in_h image at `src` (in_ch channels per pixel, `src_stride` bytes
 * per row) to out_w x out_h at `dst` (out_ch channels, `dst_stride` bytes per row). in_ch 1 or 3;
 * out_ch equal to in_ch, or 3/4 from gray and 4 from RGB (alpha 255). Returns 0, or -1 when a
 * buffer cannot be allocated, the area leaves the image or the channel pair is not supported.
 * Reads up to 3 bytes past the last pixel: the source buffer needs that much slack. */
int td_resize(td_resizer *r, const uint8_t *src, int src_stride, int in_w, int in_h, int in_ch, td_area area, uint8_t *dst, int dst_stride,
              int out_w, int out_h, int out_ch);
#endif
