/*
 * H.264 deblocking (8-bit, 4:2:0): the luma and chroma edge filters, normal (bS < 4) and intra
 * (bS = 4), across horizontal edges (v_) and vertical ones (h_, through a transpose), in wasm
 * SIMD128. Tandem's own code, copied into libavcodec/ by wasm/build.sh and installed by
 * wasm-simd-hooks.patch from ff_h264dsp_init(); every output equals h264dsp_template.c's C, which
 * ff_h264_deblock_wasm_check() asserts inside the module. A filter writes only the pixels the C
 * may change. The MBAFF and 4:2:2 variants stay C.
 */
#include "config.h"
#include "h264dsp.h"

#if defined(__wasm_simd128__)
#include <stdint.h>
#include <string.h>
#include <wasm_simd128.h>

#include "libavutil/attributes.h"
#include "simd_check_wasm.h"

static _Thread_local int c_only;

#define LO(v) wasm_u16x8_extend_low_u8x16(v)
#define HI(v) wasm_u16x8_extend_high_u8x16(v)

/* |a - b| < t, per unsigned byte. */
static av_always_inline v128_t near(v128_t a, v128_t b, v128_t t)
{
    return wasm_u8x16_lt(wasm_v128_or(wasm_u8x16_sub_sat(a, b), wasm_u8x16_sub_sat(b, a)), t);
}

/* clip(((q0 - p0) * 4 + (p1 - q1) + 4) >> 3, -tc, tc) on 16-bit lanes. */
static av_always_inline v128_t delta16(v128_t p1, v128_t p0, v128_t q0, v128_t q1, v128_t tc)
{
    v128_t d = wasm_i16x8_add(wasm_i16x8_shl(wasm_i16x8_sub(q0, p0), 2), wasm_i16x8_sub(p1, q1));
    d = wasm_i16x8_shr(wasm_i16x8_add(d, wasm_i16x8_splat(4)), 3);
    return wasm_i16x8_min(wasm_i16x8_max(d, wasm_i16x8_neg(tc)), tc);
}

/* p0 + delta and q0 - delta, clipped to bytes, for 16 lanes from two 16-bit halves. */
static av_always_inline void apply_delta(v128_t *p0, v128_t *q0, v128_t p1, v128_t q1, v128_t tc, v128_t mask)
{
    const v128_t dl = delta16(LO(p1), LO(*p0), LO(*q0), LO(q1), LO(tc));
    const v128_t dh = delta16(HI(p1), HI(*p0), HI(*q0), HI(q1), HI(tc));
    const v128_t np0 = wasm_u8x16_narrow_i16x8(wasm_i16x8_add(LO(*p0), dl), wasm_i16x8_add(HI(*p0), dh));
    const v128_t nq0 = wasm_u8x16_narrow_i16x8(wasm_i16x8_sub(LO(*q0), dl), wasm_i16x8_sub(HI(*q0), dh));
    *p0 = wasm_v128_bitselect(np0, *p0, mask);
    *q0 = wasm_v128_bitselect(nq0, *q0, mask);
}

/* (a + b) >> 1 per byte, as the C's int arithmetic rounds it: the rounding-up average minus the
 * carried-away low bit. */
static av_always_inline v128_t avg_down(v128_t a, v128_t b)
{
    return wasm_i8x16_sub(wasm_u8x16_avgr(a, b), wasm_v128_and(wasm_v128_xor(a, b), wasm_i8x16_splat(1)));
}

/* The normal luma filter on 16 lanes; tc holds each lane's tc0 (a signed byte). */
static av_always_inline void luma_normal(v128_t p2, v128_t *p1, v128_t *p0, v128_t *q0, v128_t *q1, v128_t q2,
                                         int alpha, int beta, v128_t tc)
{
    const v128_t va = wasm_u8x16_splat(alpha), vb = wasm_u8x16_splat(beta);
    const v128_t mask = wasm_v128_and(wasm_v128_and(near(*p0, *q0, va), near(*p1, *p0, vb)),
                                      wasm_v128_and(near(*q1, *q0, vb), wasm_i8x16_gt(tc, wasm_i8x16_splat(-1))));
    const v128_t ap = wasm_v128_and(mask, near(p2, *p0, vb)), aq = wasm_v128_and(mask, near(q2, *q0, vb));
    /* p1 + clip(((p2 + ((p0 + q0 + 1) >> 1)) >> 1) - p1, -tc, tc), all within bytes. */
    const v128_t pq = wasm_u8x16_avgr(*p0, *q0);
    const v128_t np1 = wasm_u8x16_min(wasm_u8x16_max(avg_down(p2, pq), wasm_u8x16_sub_sat(*p1, tc)), wasm_u8x16_add_sat(*p1, tc));
    const v128_t nq1 = wasm_u8x16_min(wasm_u8x16_max(avg_down(q2, pq), wasm_u8x16_sub_sat(*q1, tc)), wasm_u8x16_add_sat(*q1, tc));
    /* tc grows by one for each side whose p2 (q2) is near. */
    const v128_t tc2 = wasm_i8x16_sub(wasm_i8x16_sub(tc, ap), aq);
    apply_delta(p0, q0, *p1, *q1, tc2, mask);
    *p1 = wasm_v128_bitselect(np1, *p1, ap);
    *q1 = wasm_v128_bitselect(nq1, *q1, aq);
}

/* One side of the intra luma filter on 16-bit lanes: the strong p0', p1', p2' (or q's). */
static av_always_inline void intra_side(v128_t p3, v128_t p2, v128_t p1, v128_t p0, v128_t q0, v128_t q1,
                                        v128_t *s0, v128_t *s1, v128_t *s2, v128_t *w0)
{
    const v128_t k2 = wasm_i16x8_splat(2), k4 = wasm_i16x8_splat(4);
    const v128_t p0q0 = wasm_i16x8_add(p0, q0);
    /* (p2 + 2p1 + 2p0 + 2q0 + q1 + 4) >> 3 */
    *s0 = wasm_u16x8_shr(wasm_i16x8_add(wasm_i16x8_add(p2, q1), wasm_i16x8_add(wasm_i16x8_shl(wasm_i16x8_add(p1, p0q0), 1), k4)), 3);
    /* (p2 + p1 + p0 + q0 + 2) >> 2 */
    *s1 = wasm_u16x8_shr(wasm_i16x8_add(wasm_i16x8_add(p2, p1), wasm_i16x8_add(p0q0, k2)), 2);
    /* (2p3 + 3p2 + p1 + p0 + q0 + 4) >> 3 */
    const v128_t p3p2 = wasm_i16x8_shl(wasm_i16x8_add(p3, p2), 1);
    *s2 = wasm_u16x8_shr(wasm_i16x8_add(wasm_i16x8_add(p3p2, p2), wasm_i16x8_add(wasm_i16x8_add(p1, p0q0), k4)), 3);
    /* (2p1 + p0 + q1 + 2) >> 2 */
    *w0 = wasm_u16x8_shr(wasm_i16x8_add(wasm_i16x8_add(wasm_i16x8_shl(p1, 1), p0), wasm_i16x8_add(q1, k2)), 2);
}

static av_always_inline void luma_intra(v128_t p3, v128_t *p2, v128_t *p1, v128_t *p0, v128_t *q0, v128_t *q1,
                                        v128_t *q2, v128_t q3, int alpha, int beta)
{
    const v128_t va = wasm_u8x16_splat(alpha), vb = wasm_u8x16_splat(beta);
    const v128_t mask = wasm_v128_and(wasm_v128_and(near(*p0, *q0, va), near(*p1, *p0, vb)), near(*q1, *q0, vb));
    const v128_t strong = wasm_v128_and(mask, near(*p0, *q0, wasm_u8x16_splat((alpha >> 2) + 2)));
    const v128_t ap = wasm_v128_and(strong, near(*p2, *p0, vb)), aq = wasm_v128_and(strong, near(*q2, *q0, vb));
    v128_t ps0[2], ps1[2], ps2[2], pw0[2], qs0[2], qs1[2], qs2[2], qw0[2];
    intra_side(LO(p3), LO(*p2), LO(*p1), LO(*p0), LO(*q0), LO(*q1), &ps0[0], &ps1[0], &ps2[0], &pw0[0]);
    intra_side(HI(p3), HI(*p2), HI(*p1), HI(*p0), HI(*q0), HI(*q1), &ps0[1], &ps1[1], &ps2[1], &pw0[1]);
    intra_side(LO(q3), LO(*q2), LO(*q1), LO(*q0), LO(*p0), LO(*p1), &qs0[0], &qs1[0], &qs2[0], &qw0[0]);
    intra_side(HI(q3), HI(*q2), HI(*q1), HI(*q0), HI(*p0), HI(*p1), &qs0[1], &qs1[1], &qs2[1], &qw0[1]);
#define PACK(v) wasm_u8x16_narrow_i16x8(v[0], v[1])
    const v128_t np0 = wasm_v128_bitselect(PACK(ps0), PACK(pw0), ap);
    const v128_t nq0 = wasm_v128_bitselect(PACK(qs0), PACK(qw0), aq);
    *p2 = wasm_v128_bitselect(PACK(ps2), *p2, ap);
    *p1 = wasm_v128_bitselect(PACK(ps1), *p1, ap);
    *q1 = wasm_v128_bitselect(PACK(qs1), *q1, aq);
    *q2 = wasm_v128_bitselect(PACK(qs2), *q2, aq);
#undef PACK
    *p0 = wasm_v128_bitselect(np0, *p0, mask);
    *q0 = wasm_v128_bitselect(nq0, *q0, mask);
}

/* Each of 4 tc0 values over `each` lanes. */
static av_always_inline v128_t tc_lanes(const int8_t *tc0, int each)
{
    const v128_t t = wasm_v128_load32_zero(tc0);
    return each == 4 ? wasm_i8x16_shuffle(t, t, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3)
                     : wasm_i8x16_shuffle(t, t, 0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0);
}

/* ---- transposes for the vertical edges ---- */

/* 16 rows of 8 bytes (r[i] in the low half) to 8 columns of 16. */
static av_always_inline void rows16_to_cols8(const v128_t r[16], v128_t c[8])
{
    v128_t a[8], b[8], d[8];
    for (int i = 0; i < 8; i++)
        a[i] = wasm_i8x16_shuffle(r[2 * i], r[2 * i + 1], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    for (int j = 0; j < 4; j++) {
        b[2 * j] = wasm_i16x8_shuffle(a[2 * j], a[2 * j + 1], 0, 8, 1, 9, 2, 10, 3, 11);
        b[2 * j + 1] = wasm_i16x8_shuffle(a[2 * j], a[2 * j + 1], 4, 12, 5, 13, 6, 14, 7, 15);
    }
    for (int h = 0; h < 2; h++) { /* rows 0-7, then 8-15 */
        d[4 * h + 0] = wasm_i32x4_shuffle(b[4 * h + 0], b[4 * h + 2], 0, 4, 1, 5);
        d[4 * h + 1] = wasm_i32x4_shuffle(b[4 * h + 0], b[4 * h + 2], 2, 6, 3, 7);
        d[4 * h + 2] = wasm_i32x4_shuffle(b[4 * h + 1], b[4 * h + 3], 0, 4, 1, 5);
        d[4 * h + 3] = wasm_i32x4_shuffle(b[4 * h + 1], b[4 * h + 3], 2, 6, 3, 7);
    }
    for (int k = 0; k < 4; k++) {
        c[2 * k] = wasm_i64x2_shuffle(d[k], d[k + 4], 0, 2);
        c[2 * k + 1] = wasm_i64x2_shuffle(d[k], d[k + 4], 1, 3);
    }
}

/* Writes four columns of 16 rows as 4 bytes per row at dst. */
static av_always_inline void store_cols4(uint8_t *dst, ptrdiff_t stride, v128_t c0, v128_t c1, v128_t c2, v128_t c3)
{
    const v128_t x0 = wasm_i8x16_shuffle(c0, c1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const v128_t x1 = wasm_i8x16_shuffle(c0, c1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const v128_t y0 = wasm_i8x16_shuffle(c2, c3, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const v128_t y1 = wasm_i8x16_shuffle(c2, c3, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const v128_t z[4] = {wasm_i16x8_shuffle(x0, y0, 0, 8, 1, 9, 2, 10, 3, 11), wasm_i16x8_shuffle(x0, y0, 4, 12, 5, 13, 6, 14, 7, 15),
                         wasm_i16x8_shuffle(x1, y1, 0, 8, 1, 9, 2, 10, 3, 11), wasm_i16x8_shuffle(x1, y1, 4, 12, 5, 13, 6, 14, 7, 15)};
    for (int g = 0; g < 4; g++) {
        wasm_v128_store32_lane(dst + (4 * g + 0) * stride, z[g], 0);
        wasm_v128_store32_lane(dst + (4 * g + 1) * stride, z[g], 1);
        wasm_v128_store32_lane(dst + (4 * g + 2) * stride, z[g], 2);
        wasm_v128_store32_lane(dst + (4 * g + 3) * stride, z[g], 3);
    }
}

/* Writes two columns of 16 rows as 2 bytes per row at dst. */
static av_always_inline void store_cols2(uint8_t *dst, ptrdiff_t stride, v128_t c0, v128_t c1)
{
    const v128_t x0 = wasm_i8x16_shuffle(c0, c1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const v128_t x1 = wasm_i8x16_shuffle(c0, c1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
#define ROW2(v, r, lane) wasm_v128_store16_lane(dst + (r) * stride, v, lane)
    ROW2(x0, 0, 0); ROW2(x0, 1, 1); ROW2(x0, 2, 2); ROW2(x0, 3, 3); ROW2(x0, 4, 4); ROW2(x0, 5, 5); ROW2(x0, 6, 6); ROW2(x0, 7, 7);
    ROW2(x1, 8, 0); ROW2(x1, 9, 1); ROW2(x1, 10, 2); ROW2(x1, 11, 3); ROW2(x1, 12, 4); ROW2(x1, 13, 5); ROW2(x1, 14, 6); ROW2(x1, 15, 7);
#undef ROW2
}

static av_always_inline void load_rows16(const uint8_t *src, ptrdiff_t stride, v128_t c[8])
{
    v128_t r[16];
    for (int i = 0; i < 16; i++)
        r[i] = wasm_v128_load64_zero(src + i * stride);
    rows16_to_cols8(r, c);
}

/* ---- luma ---- */

static void v_luma(uint8_t *pix, ptrdiff_t stride, int alpha, int beta, int8_t *tc0)
{
    v128_t p1 = wasm_v128_load(pix - 2 * stride), p0 = wasm_v128_load(pix - stride);
    v128_t q0 = wasm_v128_load(pix), q1 = wasm_v128_load(pix + stride);
    luma_normal(wasm_v128_load(pix - 3 * stride), &p1, &p0, &q0, &q1, wasm_v128_load(pix + 2 * stride), alpha, beta, tc_lanes(tc0, 4));
    wasm_v128_store(pix - 2 * stride, p1);
    wasm_v128_store(pix - stride, p0);
    wasm_v128_store(pix, q0);
    wasm_v128_store(pix + stride, q1);
}

static void h_luma(uint8_t *pix, ptrdiff_t stride, int alpha, int beta, int8_t *tc0)
{
    v128_t c[8]; /* p3 p2 p1 p0 q0 q1 q2 q3 */
    load_rows16(pix - 4, stride, c);
    luma_normal(c[1], &c[2], &c[3], &c[4], &c[5], c[6], alpha, beta, tc_lanes(tc0, 4));
    store_cols4(pix - 2, stride, c[2], c[3], c[4], c[5]);
}

static void v_luma_intra(uint8_t *pix, ptrdiff_t stride, int alpha, int beta)
{
    v128_t p2 = wasm_v128_load(pix - 3 * stride), p1 = wasm_v128_load(pix - 2 * stride), p0 = wasm_v128_load(pix - stride);
    v128_t q0 = wasm_v128_load(pix), q1 = wasm_v128_load(pix + stride), q2 = wasm_v128_load(pix + 2 * stride);
    luma_intra(wasm_v128_load(pix - 4 * stride), &p2, &p1, &p0, &q0, &q1, &q2, wasm_v128_load(pix + 3 * stride), alpha, beta);
    wasm_v128_store(pix - 3 * stride, p2);
    wasm_v128_store(pix - 2 * stride, p1);
    wasm_v128_store(pix - stride, p0);
    wasm_v128_store(pix, q0);
    wasm_v128_store(pix + stride, q1);
    wasm_v128_store(pix + 2 * stride, q2);
}

static void h_luma_intra(uint8_t *pix, ptrdiff_t stride, int alpha, int beta)
{
    v128_t c[8];
    load_rows16(pix - 4, stride, c);
    luma_intra(c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], c[7], alpha, beta);
    store_cols4(pix - 3, stride, c[1], c[2], c[3], c[4]);
    store_cols2(pix + 1, stride, c[5], c[6]);
}

/* ---- chroma (8 lanes: an 8-pixel edge of 4:2:0 chroma) ---- */

static av_always_inline void chroma_normal(v128_t p1, v128_t *p0, v128_t *q0, v128_t q1, int alpha, int beta, v128_t tc)
{
    const v128_t vb = wasm_u8x16_splat(beta);
    const v128_t mask = wasm_v128_and(wasm_v128_and(near(*p0, *q0, wasm_u8x16_splat(alpha)), near(p1, *p0, vb)),
                                      wasm_v128_and(near(q1, *q0, vb), wasm_i8x16_gt(tc, wasm_i8x16_splat(0))));
    const v128_t d = delta16(LO(p1), LO(*p0), LO(*q0), LO(q1), LO(tc));
    const v128_t np0 = wasm_u8x16_narrow_i16x8(wasm_i16x8_add(LO(*p0), d), d);
    const v128_t nq0 = wasm_u8x16_narrow_i16x8(wasm_i16x8_sub(LO(*q0), d), d);
    *p0 = wasm_v128_bitselect(np0, *p0, mask);
    *q0 = wasm_v128_bitselect(nq0, *q0, mask);
}

static av_always_inline void chroma_intra(v128_t p1, v128_t *p0, v128_t *q0, v128_t q1, int alpha, int beta)
{
    const v128_t vb = wasm_u8x16_splat(beta), k2 = wasm_i16x8_splat(2);
    const v128_t mask = wasm_v128_and(wasm_v128_and(near(*p0, *q0, wasm_u8x16_splat(alpha)), near(p1, *p0, vb)), near(q1, *q0, vb));
    const v128_t np0 = wasm_u16x8_shr(wasm_i16x8_add(wasm_i16x8_add(wasm_i16x8_shl(LO(p1), 1), LO(*p0)), wasm_i16x8_add(LO(q1), k2)), 2);
    const v128_t nq0 = wasm_u16x8_shr(wasm_i16x8_add(wasm_i16x8_add(wasm_i16x8_shl(LO(q1), 1), LO(*q0)), wasm_i16x8_add(LO(p1), k2)), 2);
    *p0 = wasm_v128_bitselect(wasm_u8x16_narrow_i16x8(np0, np0), *p0, mask);
    *q0 = wasm_v128_bitselect(wasm_u8x16_narrow_i16x8(nq0, nq0), *q0, mask);
}

/* 8 rows of 4 bytes at src (p1 p0 q0 q1) to four 8-lane columns, and back. */
static av_always_inline void load_rows8x4(const uint8_t *src, ptrdiff_t stride, v128_t c[4])
{
    v128_t a[4];
    for (int i = 0; i < 4; i++)
        a[i] = wasm_i8x16_shuffle(wasm_v128_load32_zero(src + 2 * i * stride), wasm_v128_load32_zero(src + (2 * i + 1) * stride),
                                  0, 16, 1, 17, 2, 18, 3, 19, 0, 0, 0, 0, 0, 0, 0, 0);
    const v128_t b0 = wasm_i16x8_shuffle(a[0], a[1], 0, 8, 1, 9, 2, 10, 3, 11); /* rows 0-3, columns 0-3 */
    const v128_t b1 = wasm_i16x8_shuffle(a[2], a[3], 0, 8, 1, 9, 2, 10, 3, 11); /* rows 4-7 */
    const v128_t lo = wasm_i32x4_shuffle(b0, b1, 0, 4, 1, 5), hi = wasm_i32x4_shuffle(b0, b1, 2, 6, 3, 7);
    c[0] = lo;
    c[1] = wasm_i64x2_shuffle(lo, lo, 1, 1);
    c[2] = hi;
    c[3] = wasm_i64x2_shuffle(hi, hi, 1, 1);
}

static av_always_inline void store_rows8x4(uint8_t *dst, ptrdiff_t stride, const v128_t c[4])
{
    const v128_t x = wasm_i8x16_shuffle(c[0], c[1], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const v128_t y = wasm_i8x16_shuffle(c[2], c[3], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const v128_t z0 = wasm_i16x8_shuffle(x, y, 0, 8, 1, 9, 2, 10, 3, 11), z1 = wasm_i16x8_shuffle(x, y, 4, 12, 5, 13, 6, 14, 7, 15);
    wasm_v128_store32_lane(dst, z0, 0);
    wasm_v128_store32_lane(dst + stride, z0, 1);
    wasm_v128_store32_lane(dst + 2 * stride, z0, 2);
    wasm_v128_store32_lane(dst + 3 * stride, z0, 3);
    wasm_v128_store32_lane(dst + 4 * stride, z1, 0);
    wasm_v128_store32_lane(dst + 5 * stride, z1, 1);
    wasm_v128_store32_lane(dst + 6 * stride, z1, 2);
    wasm_v128_store32_lane(dst + 7 * stride, z1, 3);
}

static void v_chroma(uint8_t *pix, ptrdiff_t stride, int alpha, int beta, int8_t *tc0)
{
    v128_t p0 = wasm_v128_load64_zero(pix - stride), q0 = wasm_v128_load64_zero(pix);
    chroma_normal(wasm_v128_load64_zero(pix - 2 * stride), &p0, &q0, wasm_v128_load64_zero(pix + stride), alpha, beta, tc_lanes(tc0, 2));
    wasm_v128_store64_lane(pix - stride, p0, 0);
    wasm_v128_store64_lane(pix, q0, 0);
}

static void h_chroma(uint8_t *pix, ptrdiff_t stride, int alpha, int beta, int8_t *tc0)
{
    v128_t c[4];
    load_rows8x4(pix - 2, stride, c);
    chroma_normal(c[0], &c[1], &c[2], c[3], alpha, beta, tc_lanes(tc0, 2));
    store_rows8x4(pix - 2, stride, c);
}

static void v_chroma_intra(uint8_t *pix, ptrdiff_t stride, int alpha, int beta)
{
    v128_t p0 = wasm_v128_load64_zero(pix - stride), q0 = wasm_v128_load64_zero(pix);
    chroma_intra(wasm_v128_load64_zero(pix - 2 * stride), &p0, &q0, wasm_v128_load64_zero(pix + stride), alpha, beta);
    wasm_v128_store64_lane(pix - stride, p0, 0);
    wasm_v128_store64_lane(pix, q0, 0);
}

static void h_chroma_intra(uint8_t *pix, ptrdiff_t stride, int alpha, int beta)
{
    v128_t c[4];
    load_rows8x4(pix - 2, stride, c);
    chroma_intra(c[0], &c[1], &c[2], c[3], alpha, beta);
    store_rows8x4(pix - 2, stride, c);
}

void ff_h264dsp_init_wasm(H264DSPContext *c, const int bit_depth, const int chroma_format_idc)
{
    if (bit_depth != 8 || c_only)
        return;
    ff_h264_idct_init_wasm(c, chroma_format_idc);
    c->h264_v_loop_filter_luma = v_luma;
    c->h264_h_loop_filter_luma = h_luma;
    c->h264_v_loop_filter_luma_intra = v_luma_intra;
    c->h264_h_loop_filter_luma_intra = h_luma_intra;
    c->h264_v_loop_filter_chroma = v_chroma;
    c->h264_v_loop_filter_chroma_intra = v_chroma_intra;
    if (chroma_format_idc <= 1) {
        c->h264_h_loop_filter_chroma = h_chroma;
        c->h264_h_loop_filter_chroma_intra = h_chroma_intra;
    }
}

/* ffmpeg's own C functions, for the checks: the init with these hooks off on this thread. */
void ff_h264dsp_init_c(H264DSPContext *c, const int bit_depth, const int chroma_format_idc)
{
    c_only = 1;
    ff_h264dsp_init(c, bit_depth, chroma_format_idc);
    c_only = 0;
}

/* ---- the check: each filter against ffmpeg's C on the same edges ---- */

enum { STRIDE = 32, ROWS = 24 };

/* An edge worth filtering: a smooth base with small noise and a step at the middle row and
 * column, so that the filters' conditions hold in some lanes and fail in others; every third
 * block sits near 0 or 255, where the clipping acts. */
static void check_block(uint8_t *p, uint32_t *state, int round)
{
    const int base = round % 3 == 0 ? (check_rand(state) & 1 ? 250 : 5) : (int)(check_rand(state) & 255);
    const int noise = 1 + (int)(check_rand(state) % 12), step = (int)(check_rand(state) % 40) - 20;
    for (int y = 0; y < ROWS; y++)
        for (int x = 0; x < STRIDE; x++) {
            int v = base + (int)(check_rand(state) % (2 * noise + 1)) - noise + ((y >= 12) != (x >= 16) ? step : 0);
            p[y * STRIDE + x] = v < 0 ? 0 : v > 255 ? 255 : v;
        }
}

/* Returns 0 when every filter's output equals the C's, else 1 + the index of the first that differs
 * (0 v_luma, 1 h_luma, 2 v_luma_intra, 3 h_luma_intra, 4 v_chroma, 5 h_chroma, 6 v_chroma_intra,
 * 7 h_chroma_intra) + 10 * the round. */
int ff_h264_deblock_wasm_check(unsigned seed, int rounds)
{
    H264DSPContext ref, simd;
    uint8_t start[STRIDE * ROWS], out_ref[STRIDE * ROWS], out_simd[STRIDE * ROWS];
    uint32_t state = seed;
    ff_h264dsp_init_c(&ref, 8, 1);
    ff_h264dsp_init(&simd, 8, 1);
    for (int round = 0; round < rounds * 16; round++) {
        const int alpha = (int)(check_rand(&state) % 256), beta = (int)(check_rand(&state) % 19);
        int8_t tc0[4];
        for (int i = 0; i < 4; i++)
            tc0[i] = (int8_t)((int)(check_rand(&state) % 27) - 1);
        check_block(start, &state, round);
        for (int f = 0; f < 8; f++) {
            uint8_t *const r = out_ref + 12 * STRIDE + 16 - (f & 1 ? 4 * STRIDE : 0);
            uint8_t *const s = out_simd + 12 * STRIDE + 16 - (f & 1 ? 4 * STRIDE : 0);
            memcpy(out_ref, start, sizeof(start));
            memcpy(out_simd, start, sizeof(start));
            switch (f) {
            case 0: ref.h264_v_loop_filter_luma(r, STRIDE, alpha, beta, tc0); simd.h264_v_loop_filter_luma(s, STRIDE, alpha, beta, tc0); break;
            case 1: ref.h264_h_loop_filter_luma(r, STRIDE, alpha, beta, tc0); simd.h264_h_loop_filter_luma(s, STRIDE, alpha, beta, tc0); break;
            case 2: ref.h264_v_loop_filter_luma_intra(r, STRIDE, alpha, beta); simd.h264_v_loop_filter_luma_intra(s, STRIDE, alpha, beta); break;
            case 3: ref.h264_h_loop_filter_luma_intra(r, STRIDE, alpha, beta); simd.h264_h_loop_filter_luma_intra(s, STRIDE, alpha, beta); break;
            case 4: ref.h264_v_loop_filter_chroma(r, STRIDE, alpha, beta, tc0); simd.h264_v_loop_filter_chroma(s, STRIDE, alpha, beta, tc0); break;
            case 5: ref.h264_h_loop_filter_chroma(r, STRIDE, alpha, beta, tc0); simd.h264_h_loop_filter_chroma(s, STRIDE, alpha, beta, tc0); break;
            case 6: ref.h264_v_loop_filter_chroma_intra(r, STRIDE, alpha, beta); simd.h264_v_loop_filter_chroma_intra(s, STRIDE, alpha, beta); break;
            case 7: ref.h264_h_loop_filter_chroma_intra(r, STRIDE, alpha, beta); simd.h264_h_loop_filter_chroma_intra(s, STRIDE, alpha, beta); break;
            }
            if (memcmp(out_ref, out_simd, sizeof(out_ref)))
                return 1 + f + 10 * round;
        }
    }
    return 0;
}
#endif
