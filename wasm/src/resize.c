/* See resize.h. Two passes, horizontal then vertical (PIL's order, so results match it to a unit
 * of rounding): each output sample is a weighted sum of the input samples under the filter, in
 * fixed point, rounded to 8 bits between the passes. Every path computes the same exact integer
 * sums (no term is ever rounded or dropped, only reordered), so the wasm SIMD code and the scalar
 * code give the same bytes. */
#include "resize.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#define PRECISION      22 /* as PIL: 255 x 2^22 still fits an int32 accumulator */
#define ONE            (1 << PRECISION)
#define MAX_TAPS       256
#define CONSTANT_PAIRS 16 /* the start of td_resizer.pairs holds up to 8 vector constants */

void td_resizer_free(td_resizer *r) {
  free(r->taps);
  free(r->weights);
  free(r->rows);
  free(r->acc);
  free(r->pairs);
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

/* Whether an axis's plan is a plain copy: one tap of weight ONE per sample, on consecutive inputs
 * (an axis kept at its size on whole pixels), so its pass can be skipped. */
static int axis_is_copy(const int32_t *first, const int32_t *count, const int32_t *weights, int max_taps, int out) {
  for (int i = 0; i < out; i++)
    if (count[i] != 1 || weights[(size_t)i * max_taps] != ONE || first[i] != first[0] + i) return 0;
  return 1;
}

/* Everything the passes need, planned once per call. */
typedef struct plan {
  int in_ch, out_w, out_ch;
  size_t row_bytes; /* out_w x in_ch: one row between the passes */
  const int32_t *first_x, *count_x, *weights_x;
  const int32_t *first_y, *count_y, *weights_y;
  int taps_x, taps_y; /* weights per output sample in weights_x / weights_y */
  int copy_x;         /* the horizontal pass is a copy (axis_is_copy) */
  uint8_t *scratch;   /* row_bytes + 16 bytes for rows that are widened */
#ifdef __wasm_simd128__
  const int32_t *offset_x, *pairs_x; /* RGB rows: see plan_rgb_rows */
  int n_x, near_limit;
  const int32_t *pairs_y; /* per output row, ((taps_y + 1) / 2) pairs */
  const v128_t *k;        /* write_constants */
#endif
} plan;

/* Copies a row of in_ch-channel pixels as out_ch channels (gray to RGB/RGBA, RGB to RGBA). */
static void widen_row(const uint8_t *s, uint8_t *d, int out_w, int in_ch, int out_ch) {
  for (int x = 0; x < out_w; x++, d += out_ch, s += in_ch) {
    d[0] = s[0];
    d[1] = s[in_ch == 3];
    d[2] = s[2 * (in_ch == 3)];
    if (out_ch == 4) d[3] = 255;
  }
}

static void horizontal_scalar(const uint8_t *in, uint8_t *out, const plan *p) {
  const int ch = p->in_ch;
  for (int x = 0; x < p->out_w; x++) {
    const uint8_t *s = in + (size_t)p->first_x[x] * ch;
    const int32_t *w = p->weights_x + (size_t)x * p->taps_x;
    const int n = p->count_x[x];
    if (ch == 3) {
      int32_t r = 0, g = 0, b = 0;
      for (int k = 0; k < n; k++, s += 3) {
        r += s[0] * w[k];
        g += s[1] * w[k];
        b += s[2] * w[k];
      }
      out[0] = clamp_round(r);
      out[1] = clamp_round(g);
      out[2] = clamp_round(b);
      out += 3;
    } else {
      int32_t v = 0;
      for (int k = 0; k < n; k++) v += s[k] * w[k];
      *out++ = clamp_round(v);
    }
  }
}

#ifdef __wasm_simd128__
/* Scalar vertical pass over bytes [from, to) of a row: rows of the taps are `stride` apart. */
static void vertical_scalar(const uint8_t *row, ptrdiff_t stride, size_t from, size_t to, const int32_t *w, int n, uint8_t *out) {
  for (size_t i = from; i < to; i++) {
    int32_t acc = 0;
    for (int k = 0; k < n; k++) acc += row[(ptrdiff_t)i + k * stride] * w[k];
    out[i] = clamp_round(acc);
  }
}

/* wasm SIMD. A weight has PRECISION = 22 bits, too many for 16-bit multiplies, so it is split as
 * w = hi * 2^15 + lo (hi <= 128, lo < 2^15, both fit an i16) and two sums are kept, of pixel x hi and
 * of pixel x lo; hi_sum * 2^15 + lo_sum is then exactly the sum of pixel x w that the scalar code
 * forms (lo_sum stays under 2^31 for up to MAX_TAPS taps). Taps go in pairs through
 * i32x4.dot_i16x8_s, which multiplies and adds two taps per lane in one instruction, where the
 * 32-bit multiply did one tap and cost more. */
#define LO_BITS 15
#define LO_MASK ((1 << LO_BITS) - 1)
#define Z       0x80 /* a swizzle index that yields a zero byte */

static int32_t pack_i16(int32_t a, int32_t b) { return (int32_t)((uint32_t)a | (uint32_t)b << 16); }

/* Taps w[0..n) as pairs (a zero tap completes an odd count): pair j is {hi, lo} at out[2j], out[2j+1],
 * each an i32 holding two i16 (the pair's first tap in the low half), splatted into a dot's operand. */
static void split_pairs(const int32_t *w, int n, int32_t *out) {
  for (int k = 0; k < n; k += 2) {
    const int32_t a = w[k], b = k + 1 < n ? w[k + 1] : 0;
    *out++ = pack_i16(a >> LO_BITS, b >> LO_BITS);
    *out++ = pack_i16(a & LO_MASK, b & LO_MASK);
  }
}

/* The vector constants, read from memory: written as literals, each use would become a v128.const,
 * which V8 builds anew every time (several instructions) instead of keeping it in a register. */
enum { K_PAIR0, K_PAIR1, K_PAIR2, K_PACK4, K_HALF, K_COUNT }; /* K_COUNT <= CONSTANT_PAIRS / 2 */
static void write_constants(v128_t *k) {
  k[K_PAIR0] = wasm_u8x16_const(0, Z, 3, Z, 1, Z, 4, Z, 2, Z, 5, Z, Z, Z, Z, Z);
  k[K_PAIR1] = wasm_u8x16_const(6, Z, 9, Z, 7, Z, 10, Z, 8, Z, 11, Z, Z, Z, Z, Z);
  k[K_PAIR2] = wasm_u8x16_const(12, Z, Z, Z, 13, Z, Z, Z, 14, Z, Z, Z, Z, Z, Z, Z);
  k[K_PACK4] = wasm_u8x16_const(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, Z, Z, Z, Z);
  k[K_HALF] = wasm_i32x4_splat(ONE >> 1);
}

/* px's dot with a split pair, added to hi and lo, or (first) assigned to them. */
static inline void dot_add(v128_t px, const int32_t *pair, v128_t *hi, v128_t *lo, int first) {
  const v128_t h = wasm_i32x4_dot_i16x8(px, wasm_v128_load32_splat(pair)), l = wasm_i32x4_dot_i16x8(px, wasm_v128_load32_splat(pair + 1));
  *hi = first ? h : wasm_i32x4_add(*hi, h);
  *lo = first ? l : wasm_i32x4_add(*lo, l);
}

/* hi * 2^15 + lo rounded to 8 bits, as clamp_round (the narrowing saturates). */
static inline v128_t finish(v128_t hi, v128_t lo, const v128_t *k) {
  const v128_t sum = wasm_i32x4_add(wasm_i32x4_add(wasm_i32x4_shl(hi, LO_BITS), lo), k[K_HALF]);
  return wasm_i32x4_shr(sum, PRECISION);
}

/* RGB rows. Every output pixel is given the same tap count n, the axis's largest: a shorter
 * window gets zero taps, on its left where it would pass the row's end. With one count per row the
 * loop runs one kernel, chosen once, with no branching on counts. offset[x] is the byte offset of
 * pixel x's first tap, pairs + x * 2 * ((n + 1) / 2) its split pairs. Returns n. */
static int plan_rgb_rows(int in_w, const plan *p, int32_t *offset, int32_t *pairs) {
  int n = 1;
  for (int x = 0; x < p->out_w; x++)
    if (p->count_x[x] > n) n = p->count_x[x];
  const int stride = 2 * ((n + 1) / 2);
  int32_t w[MAX_TAPS];
  for (int x = 0; x < p->out_w; x++) {
    const int first = p->first_x[x] < in_w - n ? p->first_x[x] : in_w - n, shift = p->first_x[x] - first;
    memset(w, 0, (size_t)n * sizeof *w);
    memcpy(w + shift, p->weights_x + (size_t)x * p->taps_x, (size_t)p->count_x[x] * sizeof *w);
    offset[x] = 3 * first;
    split_pairs(w, n, pairs + (size_t)x * stride);
  }
  return n;
}

/* Pair j of the taps from v, pixel bytes loaded from the first tap on, as the i16 lanes
 * R_a, R_b, G_a, G_b, B_a, B_b, 0, 0 (a = tap 2j, b = tap 2j + 1), so one dot gives R, G, B, 0. The
 * 16 loaded bytes hold 5 pixels: pair 2 has only its first tap (n <= 5 leaves the other zero). */
static inline v128_t spread_pair(v128_t v, int j, const v128_t *k) { return wasm_i8x16_swizzle(v, k[K_PAIR0 + j]); }

/* One pixel of up to 5 taps (`pairs_n` pairs) from one 16-byte load. */
static inline v128_t rgb_pixel_near(const uint8_t *s, const int32_t *pw, int pairs_n, const v128_t *k) {
  const v128_t v = wasm_v128_load(s);
  v128_t hi, lo;
  dot_add(spread_pair(v, 0, k), pw, &hi, &lo, 1);
  if (pairs_n > 1) dot_add(spread_pair(v, 1, k), pw + 2, &hi, &lo, 0);
  if (pairs_n > 2) dot_add(spread_pair(v, 2, k), pw + 4, &hi, &lo, 0);
  return finish(hi, lo, k);
}

/* One pixel of any tap count, reading no further than 2 bytes past its last tap (where the
 * 16-byte load would run past the image, and for more than 5 taps). */
static inline v128_t rgb_pixel_far(const uint8_t *s, const int32_t *pw, int n, const v128_t *k) {
  v128_t hi = wasm_i32x4_splat(0), lo = hi;
  int t = 0;
  for (; t + 2 <= n; t += 2, s += 6, pw += 2) dot_add(spread_pair(wasm_v128_load64_zero(s), 0, k), pw, &hi, &lo, 0);
  if (t < n) dot_add(spread_pair(wasm_v128_load32_zero(s), 0, k), pw, &hi, &lo, 0);
  return finish(hi, lo, k);
}

static inline v128_t rgb_pixel(const uint8_t *in, const plan *p, int x, int pairs_n) {
  const int32_t *pw = p->pairs_x + (size_t)x * 2 * ((p->n_x + 1) / 2);
  const int32_t off = p->offset_x[x];
  return pairs_n && off <= p->near_limit ? rgb_pixel_near(in + off, pw, pairs_n, p->k) : rgb_pixel_far(in + off, pw, p->n_x, p->k);
}

/* A row, 4 pixels per store. pairs_n: 1 to 3 for rgb_pixel_near, 0 for rgb_pixel_far only; a
 * constant in each caller, so each gets its own straight-line kernel. */
static inline __attribute__((always_inline)) void rgb_row(const uint8_t *in, uint8_t *out, const plan *p, int pairs_n) {
  int x = 0;
  for (; x + 4 <= p->out_w; x += 4, out += 12) {
    const v128_t a = rgb_pixel(in, p, x, pairs_n), b = rgb_pixel(in, p, x + 1, pairs_n);
    const v128_t c = rgb_pixel(in, p, x + 2, pairs_n), d = rgb_pixel(in, p, x + 3, pairs_n);
    v128_t v = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(a, b), wasm_i16x8_narrow_i32x4(c, d));
    v = wasm_i8x16_swizzle(v, p->k[K_PACK4]);
    wasm_v128_store64_lane(out, v, 0);
    wasm_v128_store32_lane(out + 8, v, 2);
  }
  for (; x < p->out_w; x++, out += 3) {
    const v128_t a = rgb_pixel(in, p, x, pairs_n);
    const v128_t v = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(a, a), wasm_i16x8_narrow_i32x4(a, a));
    wasm_v128_store16_lane(out, v, 0);
    wasm_v128_store8_lane(out + 2, v, 2);
  }
}

static void horizontal_rgb(const uint8_t *in, uint8_t *out, const plan *p) {
  switch (p->n_x > 5 ? 0 : (p->n_x + 1) / 2) {
    case 1: rgb_row(in, out, p, 1); break;
    case 2: rgb_row(in, out, p, 2); break;
    case 3: rgb_row(in, out, p, 3); break;
    default: rgb_row(in, out, p, 0); break;
  }
}

/* Adds the pair of rows a, b (16 samples each) times a split pair to 4 lanes' hi and lo sums:
 * the rows' bytes are interleaved a0 b0 a1 b1 ... and widened, so each i32 lane's dot is a*wa + b*wb. */
static inline void vertical_pair(v128_t a, v128_t b, const int32_t *pair, v128_t hi[4], v128_t lo[4], int first) {
  const v128_t ab_lo = wasm_i8x16_shuffle(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const v128_t ab_hi = wasm_i8x16_shuffle(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  dot_add(wasm_u16x8_extend_low_u8x16(ab_lo), pair, &hi[0], &lo[0], first);
  dot_add(wasm_u16x8_extend_high_u8x16(ab_lo), pair, &hi[1], &lo[1], first);
  dot_add(wasm_u16x8_extend_low_u8x16(ab_hi), pair, &hi[2], &lo[2], first);
  dot_add(wasm_u16x8_extend_high_u8x16(ab_hi), pair, &hi[3], &lo[3], first);
}

/* 16 output bytes from n rows `stride` apart starting at s (an odd last row pairs with zeros). */
static inline v128_t vertical16(const uint8_t *s, ptrdiff_t stride, const int32_t *pw, int n, const v128_t *k) {
  v128_t hi[4], lo[4];
  const v128_t a = wasm_v128_load(s);
  vertical_pair(a, n > 1 ? wasm_v128_load(s + stride) : wasm_i64x2_const(0, 0), pw, hi, lo, 1);
  int t = 2;
  for (s += 2 * stride, pw += 2; t + 2 <= n; t += 2, s += 2 * stride, pw += 2)
    vertical_pair(wasm_v128_load(s), wasm_v128_load(s + stride), pw, hi, lo, 0);
  if (t < n) {
    const v128_t last = wasm_v128_load(s);
    vertical_pair(last, wasm_i64x2_const(0, 0), pw, hi, lo, 0);
  }
  return wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(finish(hi[0], lo[0], k), finish(hi[1], lo[1], k)),
                                 wasm_i16x8_narrow_i32x4(finish(hi[2], lo[2], k), finish(hi[3], lo[3], k)));
}

/* One output row of row_bytes bytes. A row's last partial 16 bytes are done as the 16 ending at
 * its end, overlapping bytes already written with the same values; rows under 16 bytes are scalar. */
static void vertical_simd(const uint8_t *row, ptrdiff_t stride, size_t row_bytes, const int32_t *pw, const int32_t *w, int n,
                          const v128_t *k, uint8_t *out) {
  if (row_bytes < 16) {
    vertical_scalar(row, stride, 0, row_bytes, w, n, out);
    return;
  }
  for (size_t i = 0; i + 16 <= row_bytes; i += 16) wasm_v128_store(out + i, vertical16(row + i, stride, pw, n, k));
  if (row_bytes % 16) wasm_v128_store(out + row_bytes - 16, vertical16(row + row_bytes - 16, stride, pw, n, k));
}
#endif

/* One row of the horizontal pass: in_ch channels from `in` (the input row) to `out`. */
static void horizontal_row(const uint8_t *in, uint8_t *out, const plan *p) {
  if (p->copy_x) {
    memcpy(out, in + (size_t)p->first_x[0] * p->in_ch, p->row_bytes);
    return;
  }
#ifdef __wasm_simd128__
  if (p->in_ch == 3) {
    horizontal_rgb(in, out, p);
    return;
  }
#endif
  horizontal_scalar(in, out, p);
}

/* Output row y of the vertical pass from the horizontal pass's rows (`stride` apart, `rows` being
 * input row 0), widened to out_ch. */
static void vertical_row(const uint8_t *rows, ptrdiff_t stride, int y, const plan *p, int32_t *acc, uint8_t *dst) {
  const int32_t *w = p->weights_y + (size_t)y * p->taps_y;
  const int n = p->count_y[y];
  const uint8_t *row = rows + p->first_y[y] * stride;
  uint8_t *out = p->in_ch == p->out_ch ? dst : p->scratch;
#ifdef __wasm_simd128__
  (void)acc;
  vertical_simd(row, stride, p->row_bytes, p->pairs_y + (size_t)y * 2 * ((p->taps_y + 1) / 2), w, n, p->k, out);
#else
  /* Whole rows at a time, which the compiler vectorises. */
  const size_t bytes = p->row_bytes;
  for (size_t i = 0; i < bytes; i++) acc[i] = row[i] * w[0];
  for (int k = 1; k < n; k++) {
    const uint8_t *rk = row + k * stride;
    const int32_t wk = w[k];
    for (size_t i = 0; i < bytes; i++) acc[i] += rk[i] * wk;
  }
  for (size_t i = 0; i < bytes; i++) out[i] = clamp_round(acc[i]);
#endif
  if (out != dst) widen_row(out, dst, p->out_w, p->in_ch, p->out_ch);
}

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
      if (in_ch == out_ch)
        memcpy(d, s, (size_t)out_w * in_ch);
      else
        widen_row(s, d, out_w, in_ch, out_ch);
    }
    return 0;
  }
  const int taps_x = max_taps_for(area.w, out_w), taps_y = max_taps_for(area.h, out_h);
  if (taps_x > MAX_TAPS || taps_y > MAX_TAPS) return -1; /* over 127x downscale: left to libswscale */
  const size_t row_bytes = (size_t)out_w * in_ch;
  /* pairs: per output column (taps_x + 1) / 2 pairs, per output row (taps_y + 1) / 2, 2 i32 each */
  const size_t pairs = CONSTANT_PAIRS + (size_t)out_w * ((taps_x + 1) / 2) + (size_t)out_h * ((taps_y + 1) / 2);
  if (grow((void **)&r->taps, &r->taps_cap, ((size_t)3 * out_w + 2 * out_h) * sizeof(int32_t)) ||
      grow((void **)&r->weights, &r->weights_cap, ((size_t)out_w * taps_x + (size_t)out_h * taps_y) * sizeof(int32_t)) ||
      grow((void **)&r->rows, &r->rows_cap, row_bytes * in_h + 16) ||
      grow((void **)&r->acc, &r->acc_cap, row_bytes * sizeof(int32_t) + row_bytes + 16) ||
      grow((void **)&r->pairs, &r->pairs_cap, 2 * pairs * sizeof(int32_t)))
    return -1;
  int32_t *first_x = r->taps, *count_x = first_x + out_w, *first_y = count_x + out_w, *count_y = first_y + out_h;
  int32_t *weights_x = r->weights, *weights_y = weights_x + (size_t)out_w * taps_x;
  plan_axis(in_w, area.x, area.w, out_w, taps_x, first_x, count_x, weights_x);
  plan_axis(in_h, area.y, area.h, out_h, taps_y, first_y, count_y, weights_y);
  plan p = {.in_ch = in_ch,
            .out_w = out_w,
            .out_ch = out_ch,
            .row_bytes = row_bytes,
            .first_x = first_x,
            .count_x = count_x,
            .weights_x = weights_x,
            .first_y = first_y,
            .count_y = count_y,
            .weights_y = weights_y,
            .taps_x = taps_x,
            .taps_y = taps_y,
            .copy_x = axis_is_copy(first_x, count_x, weights_x, taps_x, out_w),
            .scratch = (uint8_t *)(r->acc + row_bytes)};
#ifdef __wasm_simd128__
  write_constants((v128_t *)r->pairs);
  p.k = (const v128_t *)r->pairs;
  int32_t *offset_x = count_y + out_h, *pairs_x = r->pairs + 2 * CONSTANT_PAIRS,
          *pairs_y = pairs_x + (size_t)2 * out_w * ((taps_x + 1) / 2);
  if (in_ch == 3 && !p.copy_x) p.n_x = plan_rgb_rows(in_w, &p, offset_x, pairs_x);
  /* The 16-byte load of rgb_pixel_near stays within the 3 bytes of slack past the row's end. */
  p.offset_x = offset_x, p.pairs_x = pairs_x, p.near_limit = 3 * in_w + 3 - 16;
  for (int y = 0; y < out_h; y++) split_pairs(weights_y + (size_t)y * taps_y, count_y[y], pairs_y + (size_t)y * 2 * ((taps_y + 1) / 2));
  p.pairs_y = pairs_y;
#endif

  if (axis_is_copy(first_y, count_y, weights_y, taps_y, out_h)) {
    /* Each output row is one input row: the horizontal pass writes it straight out. */
    for (int y = 0; y < out_h; y++) {
      uint8_t *d = dst + (ptrdiff_t)y * dst_stride, *out = in_ch == out_ch ? d : p.scratch;
      horizontal_row(src + (ptrdiff_t)(first_y[0] + y) * src_stride, out, &p);
      if (out != d) widen_row(out, d, out_w, in_ch, out_ch);
    }
    return 0;
  }
  /* The vertical pass reads the horizontal pass's rows, or the input's when that pass is a copy. */
  const uint8_t *rows = src + (p.copy_x ? (ptrdiff_t)first_x[0] * in_ch : 0);
  ptrdiff_t stride = src_stride;
  if (!p.copy_x) {
    /* Only the input rows some output row reads go through the horizontal pass. */
    const int row_lo = first_y[0], row_hi = first_y[out_h - 1] + count_y[out_h - 1];
    for (int y = row_lo; y < row_hi; y++) horizontal_row(src + (ptrdiff_t)y * src_stride, r->rows + (size_t)y * row_bytes, &p);
    rows = r->rows;
    stride = (ptrdiff_t)row_bytes;
  }
  for (int y = 0; y < out_h; y++) vertical_row(rows, stride, y, &p, r->acc, dst + (ptrdiff_t)y * dst_stride);
  return 0;
}
