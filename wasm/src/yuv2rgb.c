/* YUV 4:2:0 and 4:2:2 to RGB24 with libswscale's own arithmetic, without its tables.
 *
 * swscale's C converter (yuv2rgb.c, used for an unscaled yuv420p or yuv422p -> rgb24 of even height) looks
 * each byte up in a clipped luma table: R = ytab[yoffs + Y + tR(V)], G = ytab[yoffs + Y + tGu(U) +
 * tGv(V)], B = ytab[yoffs + Y + tB(U)], where a chroma term t(X) = ((X * c) >> 16) - (c >> 9) is a
 * whole number of luma steps and ytab[i] = clip(((i - 512) * cy - (384 << 16) - oy + 0x8000) >> 16).
 * With s = Y + t and cy = 65536 + frac that is clip(s + ((base + s * frac) >> 16)), base holding
 * the table's offset and rounding: exact integer arithmetic, so the bytes are the tables' bytes,
 * and it runs as lanes where the tables need one load per byte. A chroma sample serves the 2x2
 * luma pixels over it, as in swscale. td_yuv2rgb_check holds every Y, U and V to sws_scale. */
#include "yuv2rgb.h"
#include <stdlib.h>
#include <string.h>
#include <libswscale/swscale.h>

void td_yuv_coeffs_init(td_yuv_coeffs *k, const int inv[4], int full_range) {
  /* As ff_yuv2rgb_c_init_tables at brightness 0, contrast and saturation 1 (which change nothing):
   * in 64 bits, C's truncating division included. */
  const int64_t cy = full_range ? 1 << 16 : ((int64_t)1 << 16) * 255 / 219, oy = full_range ? 0 : 16 << 16;
  const int64_t unit[4] = {inv[0], inv[1], -(int64_t)inv[2], -(int64_t)inv[3]};
  for (int i = 0; i < 4; i++) {
    const int64_t c = full_range ? unit[i] * 224 / 255 : unit[i];
    k->c[i] = (int32_t)((c * (1 << 16) + 0x8000) / cy);
    k->off[i] = k->c[i] >> 9;
  }
  k->base = (int32_t)(-((int64_t)384 << 16) - oy + (full_range ? 384 : 326) * cy + 0x8000);
  k->frac = (int32_t)(cy - (1 << 16));
}

static inline uint8_t channel(const td_yuv_coeffs *k, int32_t steps) {
  const int32_t v = steps + ((k->base + steps * k->frac) >> 16);
  return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* Columns [x0, x1) (even) of one pair of rows, a pixel at a time. */
static void pair_scalar(const td_yuv_coeffs *k, const uint8_t *y0, const uint8_t *y1, const uint8_t *pu, const uint8_t *pv, int x0, int x1,
                        uint8_t *o0, uint8_t *o1) {
  for (int x = x0; x < x1; x++) {
    const int32_t u = pu[x >> 1], v = pv[x >> 1];
    const int32_t tr = ((v * k->c[0]) >> 16) - k->off[0], tb = ((u * k->c[1]) >> 16) - k->off[1];
    const int32_t tg = ((u * k->c[2]) >> 16) - k->off[2] + ((v * k->c[3]) >> 16) - k->off[3];
    const int32_t a = y0[x], b = y1[x];
    o0[3 * x] = channel(k, a + tr), o0[3 * x + 1] = channel(k, a + tg), o0[3 * x + 2] = channel(k, a + tb);
    o1[3 * x] = channel(k, b + tr), o1[3 * x + 1] = channel(k, b + tg), o1[3 * x + 2] = channel(k, b + tb);
  }
}

#ifdef __wasm_simd128__
#include <wasm_simd128.h>

typedef struct lanes {
  v128_t c[4], off[4], base, frac;
} lanes;

/* A chroma term for 8 samples (widened to i32 in two halves), as i16 lanes. */
static inline v128_t chroma_term(v128_t lo, v128_t hi, v128_t c, v128_t off) {
  return wasm_i16x8_sub(wasm_i16x8_narrow_i32x4(wasm_i32x4_shr(wasm_i32x4_mul(lo, c), 16), wasm_i32x4_shr(wasm_i32x4_mul(hi, c), 16)), off);
}

/* s + ((base + s * frac) >> 16) for 8 lanes of steps s; the bytes' clip is the caller's narrow. */
static inline v128_t channel8(v128_t s, const lanes *l) {
  const v128_t lo = wasm_i32x4_shr(wasm_i32x4_add(wasm_i32x4_extmul_low_i16x8(s, l->frac), l->base), 16);
  const v128_t hi = wasm_i32x4_shr(wasm_i32x4_add(wasm_i32x4_extmul_high_i16x8(s, l->frac), l->base), 16);
  return wasm_i16x8_add(s, wasm_i16x8_narrow_i32x4(lo, hi));
}

/* 16 bytes of one channel: the row's 16 luma values plus the chroma term of each pixel. */
static inline v128_t channel16(v128_t y_lo, v128_t y_hi, v128_t t_lo, v128_t t_hi, const lanes *l) {
  return wasm_u8x16_narrow_i16x8(channel8(wasm_i16x8_add(y_lo, t_lo), l), channel8(wasm_i16x8_add(y_hi, t_hi), l));
}

/* 16 pixels' R, G and B bytes interleaved into 48. */
static inline void store_rgb(uint8_t *o, v128_t r, v128_t g, v128_t b) {
  const v128_t rg_lo = wasm_i8x16_shuffle(r, g, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const v128_t rg_hi = wasm_i8x16_shuffle(r, g, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  wasm_v128_store(o, wasm_i8x16_shuffle(rg_lo, b, 0, 1, 16, 2, 3, 17, 4, 5, 18, 6, 7, 19, 8, 9, 20, 10));
  const v128_t mid = wasm_i8x16_shuffle(rg_lo, rg_hi, 11, 0, 12, 13, 0, 14, 15, 0, 16, 17, 0, 18, 19, 0, 20, 21);
  wasm_v128_store(o + 16, wasm_i8x16_shuffle(mid, b, 0, 21, 2, 3, 22, 5, 6, 23, 8, 9, 24, 11, 12, 25, 14, 15));
  wasm_v128_store(o + 32, wasm_i8x16_shuffle(rg_hi, b, 26, 6, 7, 27, 8, 9, 28, 10, 11, 29, 12, 13, 30, 14, 15, 31));
}

/* 16 columns from x (even) of one pair of rows. */
static inline void pair16(const lanes *l, const uint8_t *y0, const uint8_t *y1, const uint8_t *pu, const uint8_t *pv, int x, uint8_t *o0,
                          uint8_t *o1) {
  const v128_t u = wasm_u16x8_extend_low_u8x16(wasm_v128_load64_zero(pu + (x >> 1)));
  const v128_t v = wasm_u16x8_extend_low_u8x16(wasm_v128_load64_zero(pv + (x >> 1)));
  const v128_t u_lo = wasm_u32x4_extend_low_u16x8(u), u_hi = wasm_u32x4_extend_high_u16x8(u);
  const v128_t v_lo = wasm_u32x4_extend_low_u16x8(v), v_hi = wasm_u32x4_extend_high_u16x8(v);
  const v128_t tr = chroma_term(v_lo, v_hi, l->c[0], l->off[0]);
  const v128_t tb = chroma_term(u_lo, u_hi, l->c[1], l->off[1]);
  const v128_t tg = wasm_i16x8_add(chroma_term(u_lo, u_hi, l->c[2], l->off[2]), chroma_term(v_lo, v_hi, l->c[3], l->off[3]));
  /* Each chroma sample's term over its two columns. */
  const v128_t r_lo = wasm_i16x8_shuffle(tr, tr, 0, 0, 1, 1, 2, 2, 3, 3), r_hi = wasm_i16x8_shuffle(tr, tr, 4, 4, 5, 5, 6, 6, 7, 7);
  const v128_t g_lo = wasm_i16x8_shuffle(tg, tg, 0, 0, 1, 1, 2, 2, 3, 3), g_hi = wasm_i16x8_shuffle(tg, tg, 4, 4, 5, 5, 6, 6, 7, 7);
  const v128_t b_lo = wasm_i16x8_shuffle(tb, tb, 0, 0, 1, 1, 2, 2, 3, 3), b_hi = wasm_i16x8_shuffle(tb, tb, 4, 4, 5, 5, 6, 6, 7, 7);
  const uint8_t *rows[2] = {y0, y1};
  uint8_t *outs[2] = {o0, o1};
  for (int i = 0; i < 2; i++) {
    const v128_t y = wasm_v128_load(rows[i] + x);
    const v128_t y_lo = wasm_u16x8_extend_low_u8x16(y), y_hi = wasm_u16x8_extend_high_u8x16(y);
    store_rgb(outs[i] + 3 * x, channel16(y_lo, y_hi, r_lo, r_hi, l), channel16(y_lo, y_hi, g_lo, g_hi, l),
              channel16(y_lo, y_hi, b_lo, b_hi, l));
  }
}
#endif

void td_yuv_to_rgb24(const td_yuv_coeffs *k, int chroma_rows_halved, const uint8_t *const planes[3], const int strides[3], int w, int h,
                     uint8_t *out, int out_stride) {
#ifdef __wasm_simd128__
  lanes l;
  for (int i = 0; i < 4; i++) l.c[i] = wasm_i32x4_splat(k->c[i]), l.off[i] = wasm_i16x8_splat((int16_t)k->off[i]);
  l.base = wasm_i32x4_splat(k->base);
  l.frac = wasm_i16x8_splat((int16_t)k->frac);
#endif
  const int even = w & ~1;
  for (int y = 0; y + 1 < h; y += 2) {
    const uint8_t *y0 = planes[0] + (ptrdiff_t)y * strides[0], *y1 = y0 + strides[0];
    /* 4:2:2 as swscale takes it: both rows of a pair from the first one's chroma row. */
    const ptrdiff_t chroma_row = chroma_rows_halved ? y >> 1 : y;
    const uint8_t *pu = planes[1] + chroma_row * strides[1], *pv = planes[2] + chroma_row * strides[2];
    uint8_t *o0 = out + (ptrdiff_t)y * out_stride, *o1 = o0 + out_stride;
    int done = 0;
#ifdef __wasm_simd128__
    if (even >= 16) {
      for (; done + 16 <= even; done += 16) pair16(&l, y0, y1, pu, pv, done, o0, o1);
      /* The last partial 16 as the 16 ending at the even columns' end, rewriting bytes with their values. */
      if (done < even) pair16(&l, y0, y1, pu, pv, even - 16, o0, o1);
      done = even;
    }
#endif
    /* An odd width's last column too: swscale's converter leaves it unwritten; here it takes its
     * chroma sample as every other column does. */
    pair_scalar(k, y0, y1, pu, pv, done, w, o0, o1);
  }
}

/* ---- the check against sws_scale ------------------------------------------------------------- */

/* One frame through both converters; 0 when every byte agrees. swscale leaves an odd width's last
 * column unwritten, so it converts one column more there (the planes hold it): its column w - 1 is
 * the pixel the last column must be. */
static int compare(struct SwsContext **sws, enum AVPixelFormat format, const int inv[4], int full, const uint8_t *const planes[3],
                   const int strides[3], int w, int h, uint8_t *want, uint8_t *got) {
  const int ws = (w + 1) & ~1;
  *sws = sws_getCachedContext(*sws, ws, h, format, ws, h, AV_PIX_FMT_RGB24, SWS_BILINEAR, NULL, NULL, NULL);
  if (!*sws) return 1;
  int *in_table, *out_table, in_full, out_full, brightness, contrast, saturation;
  if (sws_getColorspaceDetails(*sws, &in_table, &in_full, &out_table, &out_full, &brightness, &contrast, &saturation) < 0) return 2;
  int keep[4];
  memcpy(keep, out_table, sizeof keep);
  sws_setColorspaceDetails(*sws, inv, full, keep, out_full, brightness, contrast, saturation);
  uint8_t *dst[4] = {want};
  int dst_strides[4] = {ws * 3};
  if (sws_scale(*sws, (const uint8_t *const *)planes, strides, 0, h, dst, dst_strides) != h) return 3;
  td_yuv_coeffs k;
  td_yuv_coeffs_init(&k, inv, full);
  td_yuv_to_rgb24(&k, format == AV_PIX_FMT_YUV420P, planes, strides, w, h, got, w * 3);
  for (int r = 0; r < h; r++)
    if (memcmp(want + (size_t)r * ws * 3, got + (size_t)r * w * 3, (size_t)w * 3) != 0) return 4;
  return 0;
}

int td_yuv2rgb_check(void) {
  /* Every (U, V) pair is one chroma sample of a 256 x 256 chroma plane; its 2 x 2 luma pixels take
   * four Y values a frame, and 64 frames give each pair all 256 (every 9th frame, and the last,
   * for the rarer matrices). Then odd-sized windows of a hashed frame try the tails. */
  enum { S = 512, C = 256 };
  static const int spaces[] = {SWS_CS_ITU601, SWS_CS_ITU709, SWS_CS_FCC, SWS_CS_SMPTE240M, SWS_CS_BT2020};
  uint8_t *y = malloc(S * S), *u = malloc(C * C), *v = malloc(C * C), *want = malloc(S * S * 3), *got = malloc(S * S * 3);
  struct SwsContext *sws = NULL;
  int code = !y || !u || !v || !want || !got ? 1 : 0;
  for (int i = 0; i < C * C && !code; i++) u[i] = (uint8_t)(i % C), v[i] = (uint8_t)(i / C);
  for (int s = 0; s < 5 && !code; s++) {
    const int *inv = sws_getCoefficients(spaces[s]);
    for (int full = 0; full < 2 && !code; full++) {
      const int step = s < 2 ? 1 : 9;
      for (int f = 0; !code; f = f + step < 63 ? f + step : 63) {
        for (int r = 0; r < S; r++)
          for (int c = 0; c < S; c++) y[r * S + c] = (uint8_t)(4 * f + 2 * (r & 1) + (c & 1));
        const uint8_t *planes[3] = {y, u, v};
        const int strides[3] = {S, C, C};
        const int e = compare(&sws, AV_PIX_FMT_YUV420P, inv, full, planes, strides, S, S, want, got);
        if (e) code = 100 + 20 * s + 10 * full + e;
        if (f == 63) break;
      }
    }
  }
  /* Windows at even offsets whose widths leave every tail (16-column blocks, the overlap of the
   * last one, the scalar columns of rows under 16 and of odd widths), in 4:2:0 and 4:2:2. */
  uint32_t hash = 2166136261u;
  for (int i = 0; i < S * S; i++) y[i] = (uint8_t)((hash = (hash ^ (uint32_t)i) * 16777619u) >> 13);
  for (int i = 0; i < C * C; i++) u[i] = (uint8_t)((hash = (hash ^ (uint32_t)i) * 16777619u) >> 11), v[i] = (uint8_t)(hash >> 21);
  static const int sizes[][2] = {{2, 2},  {1, 2},  {6, 4},  {14, 2},  {16, 2},   {17, 2},
                                 {18, 6}, {30, 8}, {33, 4}, {46, 10}, {100, 12}, {317, 2}};
  for (int n = 0; n < (int)(sizeof sizes / sizeof sizes[0]) && !code; n++) {
    const int x0 = 2 * n, y0 = 4 * n, w = sizes[n][0], h = sizes[n][1];
    for (int p = 0; p < 2 && !code; p++) {
      const enum AVPixelFormat format = p ? AV_PIX_FMT_YUV422P : AV_PIX_FMT_YUV420P;
      const int cy0 = p ? y0 : y0 / 2;
      const uint8_t *planes[3] = {y + y0 * S + x0, u + cy0 * C + x0 / 2, v + cy0 * C + x0 / 2};
      const int strides[3] = {S, C, C};
      const int e =
          compare(&sws, format, sws_getCoefficients(n % 3 ? SWS_CS_ITU709 : SWS_CS_ITU601), n & 1, planes, strides, w, h, want, got);
      if (e) code = 300 + 20 * n + 10 * p + e;
    }
  }
  sws_freeContext(sws);
  free(y), free(u), free(v), free(want), free(got);
  return code;
}
