/* See resize.h. Two passes, horizontal then vertical (PIL's order, so results match it to a unit
 * of rounding): each output sample is a weighted sum of the input samples under the filter, in
 * fixed point, rounded to 8 bits between the passes. The vertical pass runs over whole
 * contiguous rows, which the compiler turns into wasm SIMD. */
#include "resize.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#define PRECISION 22 /* as PIL: 255 x 2^22 still fits an int32 accumulator */
#define ONE       (1 << PRECISION)
#define MAX_TAPS  256

void td_resizer_free(td_resizer *r) {
  free(r->taps);
  free(r->weights);
  free(r->rows);
  free(r->acc);
  memset(r, 0, sizeof *r);
}

static int grow(void **buffer, size_t *cap, size_t bytes) {
  if (bytes <= *cap) return 0;
  void *p = realloc(*buffer, bytes);
  if (!p) return -1;
  *buffer = p;
  *cap = bytes;
  return 0;
}

static double triangle(double x) {
  x = fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

static int max_taps_for(double span, int out) {
  double scale = span / out;
  double support = scale > 1.0 ? scale : 1.0;
  return (int)ceil(support) * 2 + 1;
}

/* Taps of `out` samples spread over [start, start + span) of an axis of `in` samples: first[i],
 * count[i] and weights[i * max_taps ...]. Taps outside [0, in) are dropped (edges renormalise). */
static void plan_axis(int in, double start, double span, int out, int max_taps, int32_t *first, int32_t *count, int32_t *weights) {
  const double scale = span / out;
  const double filter_scale = scale > 1.0 ? scale : 1.0;
  const double support = filter_scale;
  double w[MAX_TAPS];
  for (int i = 0; i < out; i++) {
    const double center = start + (i + 0.5) * scale;
    int lo = (int)floor(center - support + 0.5);
    int hi = (int)floor(center + support + 0.5);
    if (lo < 0) lo = 0;
    if (hi > in) hi = in;
    if (hi - lo > max_taps) hi = lo + max_taps;
    double sum = 0;
    for (int k = lo; k < hi; k++) sum += w[k - lo] = triangle((k - center + 0.5) / filter_scale);
    /* Taps of weight zero at either end cost time and add nothing (an axis kept at its size has
     * exactly one tap per sample after this). */
    int skip = 0;
    while (lo + skip < hi - 1 && w[skip] == 0.0) skip++;
    if (skip) {
      memmove(w, w + skip, (size_t)(hi - lo - skip) * sizeof *w);
      lo += skip;
    }
    while (hi - 1 > lo && w[hi - 1 - lo] == 0.0) hi--;
    int n = hi - lo;
    int32_t *wi = weights + (size_t)i * max_taps;
    /* Integer weights that sum to exactly ONE: the rounding error goes to the largest tap. */
    int32_t total = 0, biggest = 0;
    for (int k = 0; k < n; k++) {
      wi[k] = sum > 0 ? (int32_t)lrint(w[k] / sum * ONE) : (k == 0 ? ONE : 0);
      total += wi[k];
      if (wi[k] > wi[biggest]) biggest = k;
    }
    if (n > 0)
      wi[biggest] += ONE - total;
    else {
      lo = center < in ? (int)center : in - 1;
      n = 1;
      wi[0] = ONE;
    }
    first[i] = lo;
    count[i] = n;
  }
}

static inline uint8_t clamp_round(int32_t acc) {
  int32_t v = (acc + (ONE >> 1)) >> PRECISION;
  return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

static void horizontal_row(const uint8_t *in, uint8_t *out, int out_w, int ch, const int32_t *first, const int32_t *count,
                           const int32_t *weights, int max_taps) {
#ifdef __wasm_simd128__
  if (ch == 3) {
    /* One pixel per i32x4 (R, G, B and a neighbour's byte that gets weight-summed and dropped);
     * each store writes 4 bytes, the 4th overwritten by the next pixel (the row buffer has slack). */
    const v128_t half = wasm_i32x4_splat(ONE >> 1);
    for (int x = 0; x < out_w; x++) {
      const uint8_t *p = in + (size_t)first[x] * 3;
      const int32_t *w = weights + (size_t)x * max_taps;
      v128_t acc = half;
      for (int k = 0, n = count[x]; k < n; k++, p += 3) {
        v128_t px = wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(p)));
        acc = wasm_i32x4_add(acc, wasm_i32x4_mul(px, wasm_i32x4_splat(w[k])));
      }
      v128_t v = wasm_i32x4_shr(acc, PRECISION);
      v = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(v, v), wasm_i16x8_narrow_i32x4(v, v));
      wasm_v128_store32_lane(out, v, 0);
      out += 3;
    }
    return;
  }
#endif
  for (int x = 0; x < out_w; x++) {
    const uint8_t *p = in + (size_t)first[x] * ch;
    const int32_t *w = weights + (size_t)x * max_taps;
    const int n = count[x];
    if (ch == 3) {
      int32_t r = 0, g = 0, b = 0;
      for (int k = 0; k < n; k++, p += 3) {
        r += p[0] * w[k];
        g += p[1] * w[k];
        b += p[2] * w[k];
      }
      out[0] = clamp_round(r);
      out[1] = clamp_round(g);
      out[2] = clamp_round(b);
      out += 3;
    } else {
      int32_t v = 0;
      for (int k = 0; k < n; k++) v += p[k] * w[k];
      *out++ = clamp_round(v);
    }
  }
}

/* Writes one resized row of in_ch channels as out_ch channels. */
static void store_row(const int32_t *acc, uint8_t *dst, int out_w, int in_ch, int out_ch) {
  const int n = out_w * in_ch;
  if (in_ch == out_ch) {
    for (int i = 0; i < n; i++) dst[i] = clamp_round(acc[i]);
    return;
  }
  for (int x = 0; x < out_w; x++) {
    uint8_t *o = dst + (size_t)x * out_ch;
    if (in_ch == 1) {
      o[0] = o[1] = o[2] = clamp_round(acc[x]);
    } else {
      o[0] = clamp_round(acc[3 * x]);
      o[1] = clamp_round(acc[3 * x + 1]);
      o[2] = clamp_round(acc[3 * x + 2]);
    }
    if (out_ch == 4) o[3] = 255;
  }
}

#ifdef __wasm_simd128__
/* One output row straight from the horizontal pass's rows, 16 bytes at a time in registers;
 * the scalar loop in td_resize finishes the tail. Returns 1 when the row is done. */
static int vertical_simd(const uint8_t *row, size_t row_bytes, const int32_t *w, int n, uint8_t *out) {
  const v128_t half = wasm_i32x4_splat(ONE >> 1);
  size_t i = 0;
  for (; i + 16 <= row_bytes; i += 16) {
    v128_t a0 = half, a1 = half, a2 = half, a3 = half;
    const uint8_t *p = row + i;
    for (int k = 0; k < n; k++, p += row_bytes) {
      const v128_t px = wasm_v128_load(p), wk = wasm_i32x4_splat(w[k]);
      const v128_t lo = wasm_u16x8_extend_low_u8x16(px), hi = wasm_u16x8_extend_high_u8x16(px);
      a0 = wasm_i32x4_add(a0, wasm_i32x4_mul(wasm_u32x4_extend_low_u16x8(lo), wk));
      a1 = wasm_i32x4_add(a1, wasm_i32x4_mul(wasm_u32x4_extend_high_u16x8(lo), wk));
      a2 = wasm_i32x4_add(a2, wasm_i32x4_mul(wasm_u32x4_extend_low_u16x8(hi), wk));
      a3 = wasm_i32x4_add(a3, wasm_i32x4_mul(wasm_u32x4_extend_high_u16x8(hi), wk));
    }
    a0 = wasm_i32x4_shr(a0, PRECISION);
    a1 = wasm_i32x4_shr(a1, PRECISION);
    a2 = wasm_i32x4_shr(a2, PRECISION);
    a3 = wasm_i32x4_shr(a3, PRECISION);
    wasm_v128_store(out + i, wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(a0, a1), wasm_i16x8_narrow_i32x4(a2, a3)));
  }
  for (; i < row_bytes; i++) {
    int32_t acc = ONE >> 1;
    for (int k = 0; k < n; k++) acc += row[i + (size_t)k * row_bytes] * w[k];
    acc >>= PRECISION;
    out[i] = (uint8_t)(acc < 0 ? 0 : acc > 255 ? 255 : acc);
  }
  return 1;
}
#endif

int td_resize(td_resizer *r, const uint8_t *src, int src_stride, int in_w, int in_h, int in_ch, td_area area, uint8_t *dst, int dst_stride,
              int out_w, int out_h, int out_ch) {
  if (in_w <= 0 || in_h <= 0 || out_w <= 0 || out_h <= 0 || !(area.w > 0) || !(area.h > 0)) return -1;
  if (!(in_ch == out_ch || (in_ch == 1 && (out_ch == 3 || out_ch == 4)) || (in_ch == 3 && out_ch == 4))) return -1;
  if (in_ch != 1 && in_ch != 3) return -1;
  if (area.x < 0 || area.y < 0 || area.x + area.w > in_w + 1e-6 || area.y + area.h > in_h + 1e-6) return -1;
  if (area.w == out_w && area.h == out_h && area.x == (int)area.x && area.y == (int)area.y) {
    /* Same size on whole pixels: a copy, widened to out_ch. */
    src += (ptrdiff_t)area.y * src_stride + (ptrdiff_t)area.x * in_ch;
    for (int y = 0; y < out_h; y++) {
      const uint8_t *s = src + (ptrdiff_t)y * src_stride;
      uint8_t *d = dst + (ptrdiff_t)y * dst_stride;
      if (in_ch == out_ch) {
        memcpy(d, s, (size_t)out_w * in_ch);
        continue;
      }
      for (int x = 0; x < out_w; x++, d += out_ch) {
        d[0] = s[x * in_ch];
        d[1] = s[x * in_ch + (in_ch == 3)];
        d[2] = s[x * in_ch + 2 * (in_ch == 3)];
        if (out_ch == 4) d[3] = 255;
      }
    }
    return 0;
  }
  const int taps_x = max_taps_for(area.w, out_w), taps_y = max_taps_for(area.h, out_h);
  if (taps_x > MAX_TAPS || taps_y > MAX_TAPS) return -1; /* over 127x downscale: left to libswscale */
  const size_t row_bytes = (size_t)out_w * in_ch;
  if (grow((void **)&r->taps, &r->taps_cap, (size_t)2 * (out_w + out_h) * sizeof(int32_t)) ||
      grow((void **)&r->weights, &r->weights_cap, ((size_t)out_w * taps_x + (size_t)out_h * taps_y) * sizeof(int32_t)) ||
      grow((void **)&r->rows, &r->rows_cap, row_bytes * in_h + 16) || grow((void **)&r->acc, &r->acc_cap, row_bytes * sizeof(int32_t)))
    return -1;
  int32_t *first_x = r->taps, *count_x = first_x + out_w, *first_y = count_x + out_w, *count_y = first_y + out_h;
  int32_t *weights_x = r->weights, *weights_y = weights_x + (size_t)out_w * taps_x;
  plan_axis(in_w, area.x, area.w, out_w, taps_x, first_x, count_x, weights_x);
  plan_axis(in_h, area.y, area.h, out_h, taps_y, first_y, count_y, weights_y);

  /* Only the input rows some output row reads go through the horizontal pass. */
  const int row_lo = first_y[0], row_hi = first_y[out_h - 1] + count_y[out_h - 1];
  for (int y = row_lo; y < row_hi; y++)
    horizontal_row(src + (ptrdiff_t)y * src_stride, r->rows + (size_t)y * row_bytes, out_w, in_ch, first_x, count_x, weights_x, taps_x);

  int32_t *acc = r->acc;
  for (int y = 0; y < out_h; y++) {
    const int32_t *w = weights_y + (size_t)y * taps_y;
    const uint8_t *row = r->rows + (size_t)first_y[y] * row_bytes;
#ifdef __wasm_simd128__
    if (in_ch == out_ch && vertical_simd(row, row_bytes, w, count_y[y], dst + (ptrdiff_t)y * dst_stride)) continue;
#endif
    const int32_t w0 = w[0];
    for (size_t i = 0; i < row_bytes; i++) acc[i] = row[i] * w0;
    for (int k = 1; k < count_y[y]; k++) {
      const uint8_t *rk = row + (size_t)k * row_bytes;
      const int32_t wk = w[k];
      for (size_t i = 0; i < row_bytes; i++) acc[i] += rk[i] * wk;
    }
    store_row(acc, dst + (ptrdiff_t)y * dst_stride, out_w, in_ch, out_ch);
  }
  return 0;
}
