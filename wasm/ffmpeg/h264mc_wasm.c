/*
 * H.264 motion compensation (8-bit): the quarter-pel luma filters for 16x16, 8x8 and 4x4 blocks
 * and the eighth-pel chroma filter for 8- and 4-wide blocks, in wasm SIMD128. Tandem's own code,
 * copied into libavcodec/ by wasm/build.sh and installed by wasm-simd-hooks.patch from
 * ff_h264qpel_init() and ff_h264chroma_init(); every output equals h264qpel_template.c's and
 * h264chroma_template.c's C, which ff_h264_wasm_check() asserts inside the module.
 *
 * Ranges, as the C's int arithmetic has them: a 6-tap sum (1, -5, 20, 20, -5, 1) of 8-bit pixels
 * lies in [-2550, 10710] and fits 16-bit lanes; the centre position filters those sums again,
 * which needs 32 bits before its (x + 512) >> 10. A chroma sum is at most 64 * 255.
 */
#include "config.h"
#include "h264chroma.h"
#include "h264qpel.h"

#if defined(__wasm_simd128__)
#include <stdint.h>
#include <string.h>
#include <wasm_simd128.h>

#include "libavutil/attributes.h"
#include "simd_check_wasm.h"

/* Set on the checking thread only: the init functions then leave ffmpeg's C in the table. */
static _Thread_local int c_only;

/* ---- the 6-tap filter ---- */

/* Eight unrounded sums at s, taps at s - 2 step ... s + 3 step. */
static av_always_inline v128_t tap6(const uint8_t *s, ptrdiff_t step)
{
    const v128_t a = wasm_u16x8_load8x8(s - 2 * step), b = wasm_u16x8_load8x8(s - step);
    const v128_t c = wasm_u16x8_load8x8(s), d = wasm_u16x8_load8x8(s + step);
    const v128_t e = wasm_u16x8_load8x8(s + 2 * step), f = wasm_u16x8_load8x8(s + 3 * step);
    v128_t sum = wasm_i16x8_mul(wasm_i16x8_add(c, d), wasm_i16x8_splat(20));
    sum = wasm_i16x8_sub(sum, wasm_i16x8_mul(wasm_i16x8_add(b, e), wasm_i16x8_splat(5)));
    return wasm_i16x8_add(sum, wasm_i16x8_add(a, f));
}

/* clip((sum + 16) >> 5), as bytes in the low 8 lanes of the result. */
static av_always_inline v128_t round5(v128_t sum)
{
    v128_t r = wasm_i16x8_shr(wasm_i16x8_add(sum, wasm_i16x8_splat(16)), 5);
    return wasm_u8x16_narrow_i16x8(r, r);
}

/* Stores the low `size` bytes of v (size 4 or 8), averaged with what is there when avg. */
static av_always_inline void store_part(uint8_t *dst, v128_t v, int size, int avg)
{
    if (size == 4) {
        if (avg)
            v = wasm_u8x16_avgr(v, wasm_v128_load32_zero(dst));
        wasm_v128_store32_lane(dst, v, 0);
    } else {
        if (avg)
            v = wasm_u8x16_avgr(v, wasm_v128_load64_zero(dst));
        wasm_v128_store64_lane(dst, v, 0);
    }
}

/* The half-pel filter along `step` (1: horizontal, the stride: vertical) over a size x size block. */
static av_always_inline void lowpass(uint8_t *dst, ptrdiff_t dst_stride, const uint8_t *src,
                                     ptrdiff_t src_stride, ptrdiff_t step, int size, int avg)
{
    for (int y = 0; y < size; y++, dst += dst_stride, src += src_stride)
        for (int x = 0; x < size; x += 8)
            store_part(dst + x, round5(tap6(src + x, step)), size < 8 ? size : 8, avg);
}

/* The centre (half, half) position: the horizontal sums of rows -2 .. size + 2, unrounded, then
 * the same filter down them in 32 bits and clip((x + 512) >> 10). */
static av_always_inline void lowpass_hv(uint8_t *dst, ptrdiff_t dst_stride, const uint8_t *src,
                                        ptrdiff_t src_stride, int size, int avg)
{
    int16_t tmp[21 * 16];
    src -= 2 * src_stride;
    for (int y = 0; y < size + 5; y++, src += src_stride)
        for (int x = 0; x < size; x += 8)
            wasm_v128_store(tmp + 16 * y + x, tap6(src + x, 1));
    const v128_t k20 = wasm_i32x4_splat(20), k5 = wasm_i32x4_splat(5), k512 = wasm_i32x4_splat(512);
    for (int y = 0; y < size; y++, dst += dst_stride) {
        for (int x = 0; x < size; x += 8) {
            const int16_t *t = tmp + 16 * y + x;
            const v128_t a = wasm_v128_load(t), b = wasm_v128_load(t + 16), c = wasm_v128_load(t + 32);
            const v128_t d = wasm_v128_load(t + 48), e = wasm_v128_load(t + 64), f = wasm_v128_load(t + 80);
            /* Pair sums stay within 16 bits (at most 2 * 10710). */
            const v128_t cd = wasm_i16x8_add(c, d), be = wasm_i16x8_add(b, e), af = wasm_i16x8_add(a, f);
            v128_t lo = wasm_i32x4_mul(wasm_i32x4_extend_low_i16x8(cd), k20);
            v128_t hi = wasm_i32x4_mul(wasm_i32x4_extend_high_i16x8(cd), k20);
            lo = wasm_i32x4_sub(lo, wasm_i32x4_mul(wasm_i32x4_extend_low_i16x8(be), k5));
            hi = wasm_i32x4_sub(hi, wasm_i32x4_mul(wasm_i32x4_extend_high_i16x8(be), k5));
            lo = wasm_i32x4_add(lo, wasm_i32x4_add(wasm_i32x4_extend_low_i16x8(af), k512));
            hi = wasm_i32x4_add(hi, wasm_i32x4_add(wasm_i32x4_extend_high_i16x8(af), k512));
            const v128_t r = wasm_i16x8_narrow_i32x4(wasm_i32x4_shr(lo, 10), wasm_i32x4_shr(hi, 10));
            store_part(dst + x, wasm_u8x16_narrow_i16x8(r, r), size < 8 ? size : 8, avg);
        }
    }
}

/* dst = (a + b + 1) >> 1, or that averaged again with dst when avg. */
static av_always_inline void l2(uint8_t *dst, ptrdiff_t dst_stride, const uint8_t *a, ptrdiff_t a_stride,
                                const uint8_t *b, ptrdiff_t b_stride, int size, int avg)
{
    for (int y = 0; y < size; y++, dst += dst_stride, a += a_stride, b += b_stride) {
        if (size == 16) {
            v128_t v = wasm_u8x16_avgr(wasm_v128_load(a), wasm_v128_load(b));
            if (avg)
                v = wasm_u8x16_avgr(v, wasm_v128_load(dst));
            wasm_v128_store(dst, v);
        } else {
            store_part(dst, wasm_u8x16_avgr(wasm_v128_load64_zero(a), wasm_v128_load64_zero(b)), size, avg);
        }
    }
}

static av_always_inline void copy(uint8_t *dst, const uint8_t *src, ptrdiff_t stride, int size, int avg)
{
    for (int y = 0; y < size; y++, dst += stride, src += stride) {
        if (size == 16) {
            v128_t v = wasm_v128_load(src);
            if (avg)
                v = wasm_u8x16_avgr(v, wasm_v128_load(dst));
            wasm_v128_store(dst, v);
        } else {
            store_part(dst, wasm_v128_load64_zero(src), size, avg);
        }
    }
}

/* The sixteen positions, built as h264qpel_template.c builds them (H = horizontal half-pel,
 * V = vertical, HV = centre; a quarter position averages two neighbours). Half-pel planes are
 * `size` bytes apart, as in the C. */
static av_always_inline void qpel(uint8_t *dst, const uint8_t *src, ptrdiff_t stride, int size, int pos,
                                  int avg)
{
    uint8_t p[16 * 16], q[16 * 16];
    const ptrdiff_t s = stride;
    switch (pos) {
    case 0: copy(dst, src, s, size, avg); break;
    case 1: lowpass(p, size, src, s, 1, size, 0); l2(dst, s, src, s, p, size, size, avg); break;
    case 2: lowpass(dst, s, src, s, 1, size, avg); break;
    case 3: lowpass(p, size, src, s, 1, size, 0); l2(dst, s, src + 1, s, p, size, size, avg); break;
    case 4: lowpass(p, size, src, s, s, size, 0); l2(dst, s, src, s, p, size, size, avg); break;
    case 8: lowpass(dst, s, src, s, s, size, avg); break;
    case 12: lowpass(p, size, src, s, s, size, 0); l2(dst, s, src + s, s, p, size, size, avg); break;
    case 5: case 7: case 13: case 15: /* mc11, mc31, mc13, mc33 */
        lowpass(p, size, src + (pos >= 13 ? s : 0), s, 1, size, 0);
        lowpass(q, size, src + (pos == 7 || pos == 15 ? 1 : 0), s, s, size, 0);
        l2(dst, s, p, size, q, size, size, avg);
        break;
    case 10: lowpass_hv(dst, s, src, s, size, avg); break;
    case 6: case 14: /* mc21, mc23 */
        lowpass(p, size, src + (pos == 14 ? s : 0), s, 1, size, 0);
        lowpass_hv(q, size, src, s, size, 0);
        l2(dst, s, p, size, q, size, size, avg);
        break;
    case 9: case 11: /* mc12, mc32 */
        lowpass(p, size, src + (pos == 11 ? 1 : 0), s, s, size, 0);
        lowpass_hv(q, size, src, s, size, 0);
        l2(dst, s, p, size, q, size, size, avg);
        break;
    }
}

#define QPEL_FN(op, avg, size, pos)                                                                \
    static void op##size##_mc##pos(uint8_t *dst, const uint8_t *src, ptrdiff_t stride)            \
    {                                                                                              \
        qpel(dst, src, stride, size, pos, avg);                                                    \
    }
#define QPEL_SIZE(op, avg, size)                                                                   \
    QPEL_FN(op, avg, size, 0) QPEL_FN(op, avg, size, 1) QPEL_FN(op, avg, size, 2)                  \
    QPEL_FN(op, avg, size, 3) QPEL_FN(op, avg, size, 4) QPEL_FN(op, avg, size, 5)                  \
    QPEL_FN(op, avg, size, 6) QPEL_FN(op, avg, size, 7) QPEL_FN(op, avg, size, 8)                  \
    QPEL_FN(op, avg, size, 9) QPEL_FN(op, avg, size, 10) QPEL_FN(op, avg, size, 11)                \
    QPEL_FN(op, avg, size, 12) QPEL_FN(op, avg, size, 13) QPEL_FN(op, avg, size, 14)               \
    QPEL_FN(op, avg, size, 15)
QPEL_SIZE(put, 0, 16)
QPEL_SIZE(put, 0, 8)
QPEL_SIZE(put, 0, 4)
QPEL_SIZE(avg, 1, 16)
QPEL_SIZE(avg, 1, 8)
QPEL_SIZE(avg, 1, 4)

#define SET_QPEL(tab, op, size)                                                                    \
    tab[0] = op##size##_mc0; tab[1] = op##size##_mc1; tab[2] = op##size##_mc2;                     \
    tab[3] = op##size##_mc3; tab[4] = op##size##_mc4; tab[5] = op##size##_mc5;                     \
    tab[6] = op##size##_mc6; tab[7] = op##size##_mc7; tab[8] = op##size##_mc8;                     \
    tab[9] = op##size##_mc9; tab[10] = op##size##_mc10; tab[11] = op##size##_mc11;                 \
    tab[12] = op##size##_mc12; tab[13] = op##size##_mc13; tab[14] = op##size##_mc14;               \
    tab[15] = op##size##_mc15

void ff_h264qpel_init_wasm(H264QpelContext *c, int bit_depth)
{
    if (bit_depth != 8 || c_only)
        return;
    SET_QPEL(c->put_h264_qpel_pixels_tab[0], put, 16);
    SET_QPEL(c->put_h264_qpel_pixels_tab[1], put, 8);
    SET_QPEL(c->put_h264_qpel_pixels_tab[2], put, 4);
    SET_QPEL(c->avg_h264_qpel_pixels_tab[0], avg, 16);
    SET_QPEL(c->avg_h264_qpel_pixels_tab[1], avg, 8);
    SET_QPEL(c->avg_h264_qpel_pixels_tab[2], avg, 4);
}

/* ---- chroma: ((8-x)(8-y) a + x(8-y) b + (8-x)y c + xy d + 32) >> 6, as the C's three cases ---- */

static av_always_inline void chroma(uint8_t *dst, const uint8_t *src, ptrdiff_t stride, int h, int x,
                                    int y, int width, int avg)
{
    const int A = (8 - x) * (8 - y), B = x * (8 - y), C = (8 - x) * y, D = x * y;
    const v128_t k32 = wasm_i16x8_splat(32);
    if (D) {
        const v128_t a = wasm_i16x8_splat(A), b = wasm_i16x8_splat(B), c = wasm_i16x8_splat(C),
                     d = wasm_i16x8_splat(D);
        for (int i = 0; i < h; i++, dst += stride, src += stride) {
            v128_t s = wasm_i16x8_add(wasm_i16x8_mul(wasm_u16x8_load8x8(src), a), k32);
            s = wasm_i16x8_add(s, wasm_i16x8_mul(wasm_u16x8_load8x8(src + 1), b));
            s = wasm_i16x8_add(s, wasm_i16x8_mul(wasm_u16x8_load8x8(src + stride), c));
            s = wasm_i16x8_add(s, wasm_i16x8_mul(wasm_u16x8_load8x8(src + stride + 1), d));
            s = wasm_u16x8_shr(s, 6);
            store_part(dst, wasm_u8x16_narrow_i16x8(s, s), width, avg);
        }
    } else {
        const ptrdiff_t step = C ? stride : 1;
        const v128_t a = wasm_i16x8_splat(A), e = wasm_i16x8_splat(B + C);
        for (int i = 0; i < h; i++, dst += stride, src += stride) {
            v128_t s = wasm_i16x8_add(wasm_i16x8_mul(wasm_u16x8_load8x8(src), a), k32);
            if (B + C)
                s = wasm_i16x8_add(s, wasm_i16x8_mul(wasm_u16x8_load8x8(src + step), e));
            s = wasm_u16x8_shr(s, 6);
            store_part(dst, wasm_u8x16_narrow_i16x8(s, s), width, avg);
        }
    }
}

static void put_chroma8(uint8_t *dst, uint8_t *src, ptrdiff_t stride, int h, int x, int y)
{
    chroma(dst, src, stride, h, x, y, 8, 0);
}
static void put_chroma4(uint8_t *dst, uint8_t *src, ptrdiff_t stride, int h, int x, int y)
{
    chroma(dst, src, stride, h, x, y, 4, 0);
}
static void avg_chroma8(uint8_t *dst, uint8_t *src, ptrdiff_t stride, int h, int x, int y)
{
    chroma(dst, src, stride, h, x, y, 8, 1);
}
static void avg_chroma4(uint8_t *dst, uint8_t *src, ptrdiff_t stride, int h, int x, int y)
{
    chroma(dst, src, stride, h, x, y, 4, 1);
}

void ff_h264chroma_init_wasm(H264ChromaContext *c, int bit_depth)
{
    if (bit_depth != 8 || c_only)
        return;
    c->put_h264_chroma_pixels_tab[0] = put_chroma8;
    c->put_h264_chroma_pixels_tab[1] = put_chroma4;
    c->avg_h264_chroma_pixels_tab[0] = avg_chroma8;
    c->avg_h264_chroma_pixels_tab[1] = avg_chroma4;
}

/* ---- the check: every replaced function against ffmpeg's C on the same inputs ---- */

enum { STRIDE = 48, ROWS = 16 + 8 };

/* Returns 0 when every output equals the C's, else 1 + a code of the first case that differs:
 * qpel (avg * 1000 + size index * 100 + position), chroma 10000 + (avg * 1000 + width index * 100
 * + x * 8 + y). */
int ff_h264_wasm_check(unsigned seed, int rounds)
{
    H264QpelContext qref, qsimd;
    H264ChromaContext cref, csimd;
    uint8_t src[STRIDE * ROWS], out_ref[STRIDE * 16], out_simd[STRIDE * 16];
    uint32_t state = seed;
    c_only = 1;
    ff_h264qpel_init(&qref, 8);
    ff_h264chroma_init(&cref, 8);
    c_only = 0;
    ff_h264qpel_init(&qsimd, 8);
    ff_h264chroma_init(&csimd, 8);
    uint8_t *const at = src + 3 * STRIDE + 3;
    for (int round = 0; round < rounds; round++) {
        for (int avg = 0; avg < 2; avg++) {
            for (int size = 0; size < 3; size++)
                for (int pos = 0; pos < 16; pos++) {
                    qpel_mc_func fr = avg ? qref.avg_h264_qpel_pixels_tab[size][pos] : qref.put_h264_qpel_pixels_tab[size][pos];
                    qpel_mc_func fs = avg ? qsimd.avg_h264_qpel_pixels_tab[size][pos] : qsimd.put_h264_qpel_pixels_tab[size][pos];
                    if (fr == fs)
                        return 1 + 90000; /* not replaced: the hook did not run */
                    check_fill(src, sizeof(src), &state, round & 1);
                    check_fill(out_ref, sizeof(out_ref), &state, 0);
                    memcpy(out_simd, out_ref, sizeof(out_ref));
                    fr(out_ref, at, STRIDE); /* the output's stride is the source's */
                    fs(out_simd, at, STRIDE);
                    if (memcmp(out_ref, out_simd, sizeof(out_ref)))
                        return 1 + avg * 1000 + size * 100 + pos;
                }
            for (int width = 0; width < 2; width++)
                for (int x = 0; x < 8; x++)
                    for (int y = 0; y < 8; y++) {
                        h264_chroma_mc_func fr = avg ? cref.avg_h264_chroma_pixels_tab[width] : cref.put_h264_chroma_pixels_tab[width];
                        h264_chroma_mc_func fs = avg ? csimd.avg_h264_chroma_pixels_tab[width] : csimd.put_h264_chroma_pixels_tab[width];
                        const int h = (round % 3 == 0) ? 2 : (round % 3 == 1) ? 4 : 8;
                        check_fill(src, sizeof(src), &state, round & 1);
                        check_fill(out_ref, sizeof(out_ref), &state, 0);
                        memcpy(out_simd, out_ref, sizeof(out_ref));
                        fr(out_ref, at, STRIDE, h, x, y);
                        fs(out_simd, at, STRIDE, h, x, y);
                        if (memcmp(out_ref, out_simd, sizeof(out_ref)))
                            return 1 + 10000 + avg * 1000 + width * 100 + x * 8 + y;
                    }
        }
    }
    return 0;
}
#endif
