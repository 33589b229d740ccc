/*
 * VP9 motion compensation (8-bit, the 8-tap filters and full-pel averaging) in wasm SIMD128.
 * Tandem's own code, copied into libavcodec/ by wasm/build.sh and installed by
 * wasm-simd-hooks.patch from ff_vp9dsp_init(); every output equals vp9dsp_template.c's C,
 * which ff_vp9_wasm_check() asserts inside the module (test/unit/simd-check.test.ts).
 *
 * The C computes clip((sum of 8 taps * pixels + 64) >> 7) in int. Here the sum runs in 16-bit
 * lanes that wrap: VP9's filters keep the true sum T in [-54*255, 182*255] (the sharp filter's
 * negative and positive taps), so T + 64 lies in [-13706, 46474] and its wrapped value is either
 * below 46475 (T + 64 >= 0) or at least 51830 (T + 64 < 0). A logical shift by 7 then gives at
 * most 363 for the first and at least 404 for the second: values above 383 are the negative sums
 * and become 0, the rest saturate to 255 when narrowed. One multiply and one add per tap.
 */
#include "config.h"
#include "vp9dsp.h"

#if defined(__wasm_simd128__)
#include <stdint.h>
#include <string.h>
#include <wasm_simd128.h>

#include "libavutil/attributes.h"
#include "simd_check_wasm.h"

typedef struct Taps {
    v128_t c[8];
} Taps;

static av_always_inline Taps taps_of(const int16_t *filter)
{
    Taps t;
    for (int k = 0; k < 8; k++)
        t.c[k] = wasm_i16x8_splat(filter[k]);
    return t;
}

/* Eight outputs at s (taps at s - 3 * step ... s + 4 * step), as u16 lanes in 0..255+. */
static av_always_inline v128_t filter8(const uint8_t *s, ptrdiff_t step, const Taps *t)
{
    v128_t acc = wasm_i16x8_splat(64);
    for (int k = 0; k < 8; k++)
        acc = wasm_i16x8_add(acc, wasm_i16x8_mul(wasm_u16x8_load8x8(s + (k - 3) * step), t->c[k]));
    v128_t r = wasm_u16x8_shr(acc, 7);
    return wasm_v128_andnot(r, wasm_u16x8_gt(r, wasm_i16x8_splat(383)));
}

static av_always_inline void filter_row(uint8_t *dst, const uint8_t *src, ptrdiff_t step, int w,
                                        const Taps *t, int avg)
{
    if (w == 4) {
        v128_t r = filter8(src, step, t);
        v128_t p = wasm_u8x16_narrow_i16x8(r, r);
        if (avg)
            p = wasm_u8x16_avgr(p, wasm_v128_load32_zero(dst));
        wasm_v128_store32_lane(dst, p, 0);
    } else if (w == 8) {
        v128_t r = filter8(src, step, t);
        v128_t p = wasm_u8x16_narrow_i16x8(r, r);
        if (avg)
            p = wasm_u8x16_avgr(p, wasm_v128_load64_zero(dst));
        wasm_v128_store64_lane(dst, p, 0);
    } else {
        for (int x = 0; x < w; x += 16) {
            v128_t p = wasm_u8x16_narrow_i16x8(filter8(src + x, step, t), filter8(src + x + 8, step, t));
            if (avg)
                p = wasm_u8x16_avgr(p, wasm_v128_load(dst + x));
            wasm_v128_store(dst + x, p);
        }
    }
}

static av_always_inline void mc_1d(uint8_t *dst, ptrdiff_t dst_stride, const uint8_t *src,
                                   ptrdiff_t src_stride, int w, int h, ptrdiff_t step,
                                   const int16_t *filter, int avg)
{
    const Taps t = taps_of(filter);
    do {
        filter_row(dst, src, step, w, &t, avg);
        dst += dst_stride;
        src += src_stride;
    } while (--h);
}

/* As the C: the horizontal pass over h + 7 rows into 8-bit rows 64 apart, then the vertical. */
static av_always_inline void mc_2d(uint8_t *dst, ptrdiff_t dst_stride, const uint8_t *src,
                                   ptrdiff_t src_stride, int w, int h, const int16_t *filterx,
                                   const int16_t *filtery, int avg)
{
    uint8_t tmp[64 * 72];
    const Taps tx = taps_of(filterx), ty = taps_of(filtery);
    src -= 3 * src_stride;
    for (int r = 0; r < h + 7; r++, src += src_stride)
        filter_row(tmp + 64 * r, src, 1, w, &tx, 0);
    for (int r = 0; r < h; r++, dst += dst_stride)
        filter_row(dst, tmp + 64 * (r + 3), 64, w, &ty, avg);
}

static av_noinline void put_h(uint8_t *dst, ptrdiff_t ds, const uint8_t *src, ptrdiff_t ss, int w,
                              int h, const int16_t *f)
{
    mc_1d(dst, ds, src, ss, w, h, 1, f, 0);
}
static av_noinline void avg_h(uint8_t *dst, ptrdiff_t ds, const uint8_t *src, ptrdiff_t ss, int w,
                              int h, const int16_t *f)
{
    mc_1d(dst, ds, src, ss, w, h, 1, f, 1);
}
static av_noinline void put_v(uint8_t *dst, ptrdiff_t ds, const uint8_t *src, ptrdiff_t ss, int w,
                              int h, const int16_t *f)
{
    mc_1d(dst, ds, src, ss, w, h, ss, f, 0);
}
static av_noinline void avg_v(uint8_t *dst, ptrdiff_t ds, const uint8_t *src, ptrdiff_t ss, int w,
                              int h, const int16_t *f)
{
    mc_1d(dst, ds, src, ss, w, h, ss, f, 1);
}
static av_noinline void put_hv(uint8_t *dst, ptrdiff_t ds, const uint8_t *src, ptrdiff_t ss, int w,
                               int h, const int16_t *fx, const int16_t *fy)
{
    mc_2d(dst, ds, src, ss, w, h, fx, fy, 0);
}
static av_noinline void avg_hv(uint8_t *dst, ptrdiff_t ds, const uint8_t *src, ptrdiff_t ss, int w,
                               int h, const int16_t *fx, const int16_t *fy)
{
    mc_2d(dst, ds, src, ss, w, h, fx, fy, 1);
}

/* Full-pel averaging: the C's rnd_avg_pixel4 is (a + b + 1) >> 1 per byte. */
static av_noinline void avg_fpel(uint8_t *dst, ptrdiff_t ds, const uint8_t *src, ptrdiff_t ss, int w,
                                 int h)
{
    do {
        if (w == 4) {
            wasm_v128_store32_lane(dst, wasm_u8x16_avgr(wasm_v128_load32_zero(dst), wasm_v128_load32_zero(src)), 0);
        } else if (w == 8) {
            wasm_v128_store64_lane(dst, wasm_u8x16_avgr(wasm_v128_load64_zero(dst), wasm_v128_load64_zero(src)), 0);
        } else {
            for (int x = 0; x < w; x += 16)
                wasm_v128_store(dst + x, wasm_u8x16_avgr(wasm_v128_load(dst + x), wasm_v128_load(src + x)));
        }
        dst += ds;
        src += ss;
    } while (--h);
}

#define MC_FNS(sz, type, idx, op)                                                                  \
    static void op##_##type##_##sz##h(uint8_t *dst, ptrdiff_t ds, const uint8_t *src,             \
                                      ptrdiff_t ss, int h, int mx, int my)                         \
    {                                                                                              \
        op##_h(dst, ds, src, ss, sz, h, ff_vp9_subpel_filters[idx][mx]);                           \
    }                                                                                              \
    static void op##_##type##_##sz##v(uint8_t *dst, ptrdiff_t ds, const uint8_t *src,             \
                                      ptrdiff_t ss, int h, int mx, int my)                         \
    {                                                                                              \
        op##_v(dst, ds, src, ss, sz, h, ff_vp9_subpel_filters[idx][my]);                           \
    }                                                                                              \
    static void op##_##type##_##sz##hv(uint8_t *dst, ptrdiff_t ds, const uint8_t *src,            \
                                       ptrdiff_t ss, int h, int mx, int my)                        \
    {                                                                                              \
        op##_hv(dst, ds, src, ss, sz, h, ff_vp9_subpel_filters[idx][mx],                           \
                ff_vp9_subpel_filters[idx][my]);                                                   \
    }
#define MC_SIZE(sz)                                                                                \
    MC_FNS(sz, smooth, FILTER_8TAP_SMOOTH, put)                                                    \
    MC_FNS(sz, smooth, FILTER_8TAP_SMOOTH, avg)                                                    \
    MC_FNS(sz, regular, FILTER_8TAP_REGULAR, put)                                                  \
    MC_FNS(sz, regular, FILTER_8TAP_REGULAR, avg)                                                  \
    MC_FNS(sz, sharp, FILTER_8TAP_SHARP, put)                                                      \
    MC_FNS(sz, sharp, FILTER_8TAP_SHARP, avg)                                                      \
    static void avg##sz(uint8_t *dst, ptrdiff_t ds, const uint8_t *src, ptrdiff_t ss, int h, int mx, \
                        int my)                                                                    \
    {                                                                                              \
        avg_fpel(dst, ds, src, ss, sz, h);                                                         \
    }
MC_SIZE(64)
MC_SIZE(32)
MC_SIZE(16)
MC_SIZE(8)
MC_SIZE(4)

#define SET_TYPE(bs, sz, type, idx)                                                                \
    dsp->mc[bs][idx][0][1][0] = put_##type##_##sz##h;                                              \
    dsp->mc[bs][idx][0][0][1] = put_##type##_##sz##v;                                              \
    dsp->mc[bs][idx][0][1][1] = put_##type##_##sz##hv;                                             \
    dsp->mc[bs][idx][1][1][0] = avg_##type##_##sz##h;                                              \
    dsp->mc[bs][idx][1][0][1] = avg_##type##_##sz##v;                                              \
    dsp->mc[bs][idx][1][1][1] = avg_##type##_##sz##hv;                                             \
    dsp->mc[bs][idx][1][0][0] = avg##sz
#define SET_SIZE(bs, sz)                                                                           \
    SET_TYPE(bs, sz, smooth, FILTER_8TAP_SMOOTH);                                                  \
    SET_TYPE(bs, sz, regular, FILTER_8TAP_REGULAR);                                                \
    SET_TYPE(bs, sz, sharp, FILTER_8TAP_SHARP);                                                    \
    dsp->mc[bs][FILTER_BILINEAR][1][0][0] = avg##sz

void ff_vp9dsp_init_wasm(VP9DSPContext *dsp, int bpp)
{
    if (bpp != 8)
        return;
    SET_SIZE(0, 64);
    SET_SIZE(1, 32);
    SET_SIZE(2, 16);
    SET_SIZE(3, 8);
    SET_SIZE(4, 4);
}

/* ---- the check: every replaced function against ff_vp9dsp_init_8's C on the same inputs ---- */

/* Returns 0 when every output equals the C's, else 1 + the index of the first case that differs
 * (bs, filter, avg, mx, my packed as bs*10000 + filter*1000 + avg*500 + mx*16 + my). */
int ff_vp9_wasm_check(unsigned seed, int rounds)
{
    enum { STRIDE = 96, ROWS = 64 + 8, DSTRIDE = 80 };
    static const int sizes[5] = {64, 32, 16, 8, 4};
    VP9DSPContext ref, simd;
    uint8_t src[STRIDE * ROWS + 16], start[DSTRIDE * 64], out_ref[DSTRIDE * 64], out_simd[DSTRIDE * 64];
    uint32_t state = seed;
    ff_vp9dsp_init_8(&ref);
    simd = ref;
    ff_vp9dsp_init_wasm(&simd, 8);
    for (int round = 0; round < rounds; round++) {
        for (int bs = 0; bs < 5; bs++) {
            const int w = sizes[bs];
            /* The decoder calls each width with heights of w / 2, w and 2 w (at most 64). */
            const int h = round % 3 == 0 ? (w > 4 ? w / 2 : w) : round % 3 == 1 ? w : (w < 64 ? 2 * w : w);
            for (int filter = 0; filter < 4; filter++)
                for (int avg = 0; avg < 2; avg++)
                    for (int mx = 0; mx < 16; mx++)
                        for (int my = 0; my < 16; my++) {
                            vp9_mc_func f_ref = ref.mc[bs][filter][avg][!!mx][!!my];
                            vp9_mc_func f_simd = simd.mc[bs][filter][avg][!!mx][!!my];
                            if (f_ref == f_simd)
                                continue;
                            check_fill(src, sizeof(src), &state, round & 1);
                            check_fill(start, sizeof(start), &state, 0);
                            memcpy(out_ref, start, sizeof(start));
                            memcpy(out_simd, start, sizeof(start));
                            const uint8_t *at = src + 3 * STRIDE + 3;
                            f_ref(out_ref, DSTRIDE, at, STRIDE, h, mx, my);
                            f_simd(out_simd, DSTRIDE, at, STRIDE, h, mx, my);
                            if (memcmp(out_ref, out_simd, sizeof(out_ref)))
                                return 1 + bs * 10000 + filter * 1000 + avg * 500 + mx * 16 + my;
                        }
        }
    }
    return 0;
}
#endif
