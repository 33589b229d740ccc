/* YUV 4:2:0 and 4:2:2 to packed RGB24, byte for byte what libswscale's table converter writes
 * (the one sws_scale takes for an unscaled yuv420p or yuv422p -> rgb24 of even height, which every
 * such video frame of the bilinear road went through), in wasm SIMD128 where the build has it and
 * in plain C otherwise; an odd width's last column, which that converter leaves unwritten, too. */
#ifndef TANDEM_YUV2RGB_H
#define TANDEM_YUV2RGB_H
#include <stdint.h>

/* The converter's constants for one matrix and range (see yuv2rgb.c). */
typedef struct td_yuv_coeffs {
  int32_t c[4];   /* V->R, U->B, U->G, V->G, in luma steps (16.16) */
  int32_t off[4]; /* each one's >> 9: the tables' centring */
  int32_t base;   /* the luma table's offset, rounding included */
  int32_t frac;   /* the luma step's fraction: cy - 65536 */
} td_yuv_coeffs;

/* The constants for swscale's coefficient table `inv` (sws_getCoefficients) and range, at its
 * default brightness, contrast and saturation. */
void td_yuv_coeffs_init(td_yuv_coeffs *k, const int inv[4], int full_range);

/* w x h (h even) pixels of yuv420p (chroma_rows_halved) or yuv422p planes to RGB24 rows
 * `out_stride` apart. */
void td_yuv_to_rgb24(const td_yuv_coeffs *k, int chroma_rows_halved, const uint8_t *const planes[3], const int strides[3], int w, int h,
                     uint8_t *out, int out_stride);

/* 0 when td_yuv_to_rgb24 equals sws_scale on every Y, U and V under every matrix and range
 * Tandem converts with, and on windows of 4:2:0 and 4:2:2 whose widths leave every tail (an odd
 * width's last column held to its neighbour of the same chroma); else a code naming the case. */
int td_yuv2rgb_check(void);
#endif
