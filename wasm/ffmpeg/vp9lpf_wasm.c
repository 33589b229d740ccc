/*
 * VP9 loop filters (8-bit: the 4-, 8- and 16-wide filters across horizontal and vertical edges,
 * and the 16-pixel and mixed pairs built from them) in wasm SIMD128. Tandem's own code, copied
 * into libavcodec/ by wasm/build.sh and installed by wasm-simd-hooks.patch from ff_vp9dsp_init();
 * every output equals vp9dsp_template.c's C, which ff_vp9_lpf_wasm_check() asserts inside the
 * module (test/unit/simd-check.test.ts).
 *
 * The eight pixels along an edge are the eight i16 lanes; p[k] and q[k] are the pixels k + 1
 * before and k after the edge. Every value the C computes fits in 16 bits (the widest, the 16-wide
 * filter's sum, is at most 16 * 255 + 8), so the lanes compute exactly what the C does, and the
 * C's per-pixel branches become masks: a lane takes the 16-wide result where the filter applies
 * and both flatness tests pass, the 8-wide where the inner one does, else the 4-wide. A vertical
 * edge's rows are transposed in and out.
 */
#include "config.h"
#include "vp9dsp.h"

#if defined(__wasm_simd128__)
#include <stdint.h>
#include <string.h>
#include <wasm_simd128.h>

#include "libavutil/attributes.h"
#include "simd_check_wasm.h"

typedef v128_t V;

typedef struct Edge {
    V p[8], q[8];
} Edge;

static av_always_inline V absdiff(V a, V b) { return wasm_i16x8_abs(wasm_i16x8_sub(a, b)); }
static av_always_inline V le(V a, V b) { return wasm_i16x8_le(a, b); }
static av_always_inline V clamp(V x, int lo, int hi)
{
    return wasm_i16x8_min(wasm_i16x8_max(x, wasm_i16x8_splat(lo)), wasm_i16x8_splat(hi));
}
static av_always_inline V pick(V mask, V a, V b) { return wasm_v128_bitselect(a, b, mask); }

/* 8x8 transpose of i16 lanes: v[j] lane i becomes v[i] lane j. */
static av_always_inline void transpose8(V *v)
{
    V a[8], b[8];
    for (int i = 0; i < 8; i += 2) {
        a[i] = wasm_i16x8_shuffle(v[i], v[i + 1], 0, 8, 1, 9, 2, 10, 3, 11);
        a[i + 1] = wasm_i16x8_shuffle(v[i], v[i + 1], 4, 12, 5, 13, 6, 14, 7, 15);
    }
    for (int i = 0; i < 8; i += 4)
        for (int j = 0; j < 2; j++) {
            b[i + j] = wasm_i32x4_shuffle(a[i + j], a[i + j + 2], 0, 4, 1, 5);
            b[i + j + 2] = wasm_i32x4_shuffle(a[i + j], a[i + j + 2], 2, 6, 3, 7);
        }
    /* b[0] = rows 0-3 of columns 0-1, b[2] = rows 0-3 of columns 2-3, b[1]/b[3] columns 4-7;
     * b[4..7] the same for rows 4-7 */
    v[0] = wasm_i64x2_shuffle(b[0], b[4], 0, 2);
    v[1] = wasm_i64x2_shuffle(b[0], b[4], 1, 3);
    v[2] = wasm_i64x2_shuffle(b[2], b[6], 0, 2);
    v[3] = wasm_i64x2_shuffle(b[2], b[6], 1, 3);
    v[4] = wasm_i64x2_shuffle(b[1], b[5], 0, 2);
    v[5] = wasm_i64x2_shuffle(b[1], b[5], 1, 3);
    v[6] = wasm_i64x2_shuffle(b[3], b[7], 0, 2);
    v[7] = wasm_i64x2_shuffle(b[3], b[7], 1, 3);
}

/* The n pixels each side of the edge (n = 4 or 8): `across` steps across the edge, `along` along it. */
static av_always_inline void load_edge(Edge *e, const uint8_t *dst, ptrdiff_t along, ptrdiff_t across, int n)
{
    if (across != 1) {
        for (int k = 0; k < n; k++) {
            e->p[k] = wasm_u16x8_load8x8(dst - (k + 1) * across);
            e->q[k] = wasm_u16x8_load8x8(dst + k * across);
        }
        return;
    }
    V rows[8];
    for (int r = 0; r < 8; r++)
        rows[r] = wasm_u16x8_load8x8(dst + r * along - 4);
    if (n == 4) {
        transpose8(rows);
        for (int k = 0; k < 4; k++) {
            e->p[k] = rows[3 - k];
            e->q[k] = rows[4 + k];
        }
        return;
    }
    for (int r = 0; r < 8; r++)
        rows[r] = wasm_u16x8_load8x8(dst + r * along - 8);
    transpose8(rows);
    for (int k = 0; k < 8; k++)
        e->p[k] = rows[7 - k];
    for (int r = 0; r < 8; r++)
        rows[r] = wasm_u16x8_load8x8(dst + r * along);
    transpose8(rows);
    for (int k = 0; k < 8; k++)
        e->q[k] = rows[k];
}

static av_always_inline void store_bytes8(uint8_t *at, V v)
{
    wasm_v128_store64_lane(at, wasm_u8x16_narrow_i16x8(v, v), 0);
}

/* Writes back the m pixels each side that a filter of this width may change (3 for the 4- and
 * 8-wide, 7 for the 16-wide; a vertical edge writes whole transposed rows of 4 or 8). */
static av_always_inline void store_edge(const Edge *e, uint8_t *dst, ptrdiff_t along, ptrdiff_t across, int n)
{
    if (across != 1) {
        const int m = n == 8 ? 7 : 3;
        for (int k = 0; k < m; k++) {
            store_bytes8(dst - (k + 1) * across, e->p[k]);
            store_bytes8(dst + k * across, e->q[k]);
        }
        return;
    }
    V rows[8];
    if (n == 4) {
        for (int k = 0; k < 4; k++) {
            rows[3 - k] = e->p[k];
            rows[4 + k] = e->q[k];
        }
        transpose8(rows);
        for (int r = 0; r < 8; r++)
            store_bytes8(dst + r * along - 4, rows[r]);
        return;
    }
    for (int k = 0; k < 8; k++)
        rows[7 - k] = e->p[k];
    transpose8(rows);
    for (int r = 0; r < 8; r++)
        store_bytes8(dst + r * along - 8, rows[r]);
    for (int k = 0; k < 8; k++)
        rows[k] = e->q[k];
    transpose8(rows);
    for (int r = 0; r < 8; r++)
        store_bytes8(dst + r * along, rows[r]);
}

/* A limit as a 16-bit lane: every difference tested lies in 0 ... 637, so a limit past it
 * (or below 0) passes (or fails) every one, as the C's int comparison does. */
static av_always_inline V limit(int x) { return wasm_i16x8_splat(x < -1 ? -1 : x > 1024 ? 1024 : x); }

/* The filters of one edge of 8 pixels, wd = 4, 8 or 16. */
static av_always_inline void loop_filter(uint8_t *dst, int E, int I, int H, ptrdiff_t along,
                                         ptrdiff_t across, int wd)
{
    Edge e;
    const int n = wd == 16 ? 8 : 4;
    load_edge(&e, dst, along, across, n);
    V *p = e.p, *q = e.q;
    const V vI = limit(I), one = wasm_i16x8_splat(1);
    V fm = wasm_v128_and(le(absdiff(p[3], p[2]), vI), le(absdiff(p[2], p[1]), vI));
    fm = wasm_v128_and(fm, wasm_v128_and(le(absdiff(p[1], p[0]), vI), le(absdiff(q[1], q[0]), vI)));
    fm = wasm_v128_and(fm, wasm_v128_and(le(absdiff(q[2], q[1]), vI), le(absdiff(q[3], q[2]), vI)));
    fm = wasm_v128_and(fm, le(wasm_i16x8_add(wasm_i16x8_shl(absdiff(p[0], q[0]), 1),
                                             wasm_i16x8_shr(absdiff(p[1], q[1]), 1)),
                              limit(E)));
    if (!wasm_v128_any_true(fm))
        return;

    V flat_in = wasm_i16x8_splat(0), flat_out = wasm_i16x8_splat(0);
    if (wd >= 8) {
        flat_in = wasm_v128_and(le(absdiff(p[3], p[0]), one), le(absdiff(p[2], p[0]), one));
        flat_in = wasm_v128_and(flat_in, wasm_v128_and(le(absdiff(p[1], p[0]), one), le(absdiff(q[1], q[0]), one)));
        flat_in = wasm_v128_and(flat_in, wasm_v128_and(le(absdiff(q[2], q[0]), one), le(absdiff(q[3], q[0]), one)));
        flat_in = wasm_v128_and(flat_in, fm);
    }
    if (wd >= 16 && wasm_v128_any_true(flat_in)) {
        flat_out = flat_in;
        for (int k = 4; k < 8; k++)
            flat_out = wasm_v128_and(flat_out, wasm_v128_and(le(absdiff(p[k], p[0]), one), le(absdiff(q[k], q[0]), one)));
    }
    const V use4 = wasm_v128_andnot(fm, flat_in), use8 = wasm_v128_andnot(flat_in, flat_out);
    Edge o = e;

    if (wasm_v128_any_true(use4)) {
        const V hev = wasm_v128_or(wasm_i16x8_gt(absdiff(p[1], p[0]), limit(H)),
                                   wasm_i16x8_gt(absdiff(q[1], q[0]), limit(H)));
        const V d = wasm_i16x8_sub(q[0], p[0]);
        const V outer = wasm_v128_and(hev, clamp(wasm_i16x8_sub(p[1], q[1]), -128, 127));
        const V f = clamp(wasm_i16x8_add(wasm_i16x8_add(wasm_i16x8_add(d, d), d), outer), -128, 127);
        const V f1 = wasm_i16x8_shr(wasm_i16x8_min(wasm_i16x8_add(f, wasm_i16x8_splat(4)), wasm_i16x8_splat(127)), 3);
        const V f2 = wasm_i16x8_shr(wasm_i16x8_min(wasm_i16x8_add(f, wasm_i16x8_splat(3)), wasm_i16x8_splat(127)), 3);
        const V f3 = wasm_i16x8_shr(wasm_i16x8_add(f1, one), 1);
        const V use4_inner = wasm_v128_andnot(use4, hev);
        o.p[0] = pick(use4, clamp(wasm_i16x8_add(p[0], f2), 0, 255), o.p[0]);
        o.q[0] = pick(use4, clamp(wasm_i16x8_sub(q[0], f1), 0, 255), o.q[0]);
        o.p[1] = pick(use4_inner, clamp(wasm_i16x8_add(p[1], f3), 0, 255), o.p[1]);
        o.q[1] = pick(use4_inner, clamp(wasm_i16x8_sub(q[1], f3), 0, 255), o.q[1]);
    }
    if (wd >= 8 && wasm_v128_any_true(use8)) {
        /* (sum of the 7 pixels around, the centre twice, + 4) >> 3, p3 and q3 repeated past the ends */
        const V x[8] = {p[3], p[2], p[1], p[0], q[0], q[1], q[2], q[3]};
        V sum = wasm_i16x8_add(wasm_i16x8_add(wasm_i16x8_add(x[0], x[0]), wasm_i16x8_add(x[0], x[1])),
                               wasm_i16x8_add(wasm_i16x8_add(x[2], x[3]), wasm_i16x8_add(x[4], wasm_i16x8_splat(4))));
        for (int j = 1; j <= 6; j++) {
            const V out = wasm_u16x8_shr(wasm_i16x8_add(sum, x[j]), 3);
            V *slot = j < 4 ? &o.p[3 - j] : &o.q[j - 4];
            *slot = pick(use8, out, *slot);
            sum = wasm_i16x8_add(wasm_i16x8_sub(sum, x[j - 3 < 0 ? 0 : j - 3]), x[j + 4 > 7 ? 7 : j + 4]);
        }
    }
    if (wd >= 16 && wasm_v128_any_true(flat_out)) {
        /* (sum of the 15 pixels around, the centre twice, + 8) >> 4, p7 and q7 repeated past the ends */
        const V x[16] = {p[7], p[6], p[5], p[4], p[3], p[2], p[1], p[0],
                         q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]};
        V sum = wasm_i16x8_add(wasm_i16x8_mul(x[0], wasm_i16x8_splat(7)), wasm_i16x8_splat(8));
        for (int i = 1; i <= 8; i++)
            sum = wasm_i16x8_add(sum, x[i]);
        for (int j = 1; j <= 14; j++) {
            const V out = wasm_u16x8_shr(wasm_i16x8_add(sum, x[j]), 4);
            V *slot = j < 8 ? &o.p[7 - j] : &o.q[j - 8];
            *slot = pick(flat_out, out, *slot);
            sum = wasm_i16x8_add(wasm_i16x8_sub(sum, x[j - 7 < 0 ? 0 : j - 7]), x[j + 8 > 15 ? 15 : j + 8]);
        }
    }
    store_edge(&o, dst, along, across, n);
}

/* One function per width and direction; the 16-pixel edges and mixed pairs call them, as the C
 * does, rather than inlining a copy of the filter each (the module stays about 55 KB smaller). */
#define LF8(dir, wd, along, across)                                                                \
    static av_noinline void loop_filter_##dir##_##wd##_8_wasm(uint8_t *dst, ptrdiff_t stride,     \
                                                              int E, int I, int H)                 \
    {                                                                                              \
        loop_filter(dst, E, I, H, along, across, wd);                                              \
    }
LF8(h, 4, stride, 1)
LF8(v, 4, 1, stride)
LF8(h, 8, stride, 1)
LF8(v, 8, 1, stride)
LF8(h, 16, stride, 1)
LF8(v, 16, 1, stride)

/* 16 pixels along the edge: two edges of 8. */
static void loop_filter_h_16_16_wasm(uint8_t *dst, ptrdiff_t stride, int E, int I, int H)
{
    loop_filter_h_16_8_wasm(dst, stride, E, I, H);
    loop_filter_h_16_8_wasm(dst + 8 * stride, stride, E, I, H);
}
static void loop_filter_v_16_16_wasm(uint8_t *dst, ptrdiff_t stride, int E, int I, int H)
{
    loop_filter_v_16_8_wasm(dst, stride, E, I, H);
    loop_filter_v_16_8_wasm(dst + 8, stride, E, I, H);
}

/* Two edges of 8 with their own widths and limits (the low byte of E, I and H for the first). */
#define MIX2(wd1, wd2)                                                                             \
    static void loop_filter_h_##wd1##wd2##_16_wasm(uint8_t *dst, ptrdiff_t stride, int E, int I,  \
                                                   int H)                                          \
    {                                                                                              \
        loop_filter_h_##wd1##_8_wasm(dst, stride, E & 0xff, I & 0xff, H & 0xff);                   \
        loop_filter_h_##wd2##_8_wasm(dst + 8 * stride, stride, E >> 8, I >> 8, H >> 8);            \
    }                                                                                              \
    static void loop_filter_v_##wd1##wd2##_16_wasm(uint8_t *dst, ptrdiff_t stride, int E, int I,  \
                                                   int H)                                          \
    {                                                                                              \
        loop_filter_v_##wd1##_8_wasm(dst, stride, E & 0xff, I & 0xff, H & 0xff);                   \
        loop_filter_v_##wd2##_8_wasm(dst + 8, stride, E >> 8, I >> 8, H >> 8);                     \
    }
MIX2(4, 4)
MIX2(4, 8)
MIX2(8, 4)
MIX2(8, 8)

void ff_vp9dsp_lpf_init_wasm(VP9DSPContext *dsp, int bpp)
{
    if (bpp != 8)
        return;
    dsp->loop_filter_8[0][0] = loop_filter_h_4_8_wasm;
    dsp->loop_filter_8[0][1] = loop_filter_v_4_8_wasm;
    dsp->loop_filter_8[1][0] = loop_filter_h_8_8_wasm;
    dsp->loop_filter_8[1][1] = loop_filter_v_8_8_wasm;
    dsp->loop_filter_8[2][0] = loop_filter_h_16_8_wasm;
    dsp->loop_filter_8[2][1] = loop_filter_v_16_8_wasm;
    dsp->loop_filter_16[0] = loop_filter_h_16_16_wasm;
    dsp->loop_filter_16[1] = loop_filter_v_16_16_wasm;
    dsp->loop_filter_mix2[0][0][0] = loop_filter_h_44_16_wasm;
    dsp->loop_filter_mix2[0][0][1] = loop_filter_v_44_16_wasm;
    dsp->loop_filter_mix2[0][1][0] = loop_filter_h_48_16_wasm;
    dsp->loop_filter_mix2[0][1][1] = loop_filter_v_48_16_wasm;
    dsp->loop_filter_mix2[1][0][0] = loop_filter_h_84_16_wasm;
    dsp->loop_filter_mix2[1][0][1] = loop_filter_v_84_16_wasm;
    dsp->loop_filter_mix2[1][1][0] = loop_filter_h_88_16_wasm;
    dsp->loop_filter_mix2[1][1][1] = loop_filter_v_88_16_wasm;
}

/* ---- the check: every replaced filter against ff_vp9dsp_init_8's C on the same pixels ---- */

/* A 32x32 area around an edge: random bytes, or smooth ones (a base with noise of 0 or 1, which
 * passes the flatness tests) with a step across the edge of 0 to 15, so that every branch of the
 * C is taken. */
static void fill_area(uint8_t *a, int size, int stride, int kind, int vertical, uint32_t *state)
{
    if (kind == 0) {
        check_fill(a, size, state, 0);
        return;
    }
    const int base = 16 + check_rand(state) % 200, step = check_rand(state) % 16;
    for (int i = 0; i < size; i++) {
        const int across = vertical ? i % stride : i / stride;
        const int noise = kind == 1 ? (int)(check_rand(state) & 1) : (int)(check_rand(state) % 5);
        a[i] = (uint8_t)(base + noise + (across >= 16 ? step : 0));
    }
}

/* Returns 0 when every output equals the C's, else 1 + the first case that differs, as
 * kind * 1000 + table * 100 + index * 10 + dir (table 0: loop_filter_8[index], 1: _16, 2: mix2). */
int ff_vp9_lpf_wasm_check(unsigned seed, int rounds)
{
    enum { STRIDE = 32, SIZE = 32 * 32 };
    VP9DSPContext ref, simd;
    uint8_t start[SIZE], out_ref[SIZE], out_simd[SIZE];
    uint32_t state = seed * 2654435761u + 3;
    ff_vp9dsp_init_8(&ref);
    simd = ref;
    ff_vp9dsp_lpf_init_wasm(&simd, 8);
    for (int round = 0; round < rounds; round++)
        for (int kind = 0; kind < 3; kind++)
            for (int table = 0; table < 3; table++)
                for (int index = 0; index < 4; index++)
                    for (int dir = 0; dir < 2; dir++)
                        for (int trial = 0; trial < 8; trial++) {
                            typedef void (*lf)(uint8_t *, ptrdiff_t, int, int, int);
                            lf f_ref, f_simd;
                            if (table == 0 && index < 3) {
                                f_ref = ref.loop_filter_8[index][dir], f_simd = simd.loop_filter_8[index][dir];
                            } else if (table == 1 && index == 0) {
                                f_ref = ref.loop_filter_16[dir], f_simd = simd.loop_filter_16[dir];
                            } else if (table == 2) {
                                f_ref = ref.loop_filter_mix2[index >> 1][index & 1][dir];
                                f_simd = simd.loop_filter_mix2[index >> 1][index & 1][dir];
                            } else {
                                continue;
                            }
                            /* limits as the decoder derives them: I 1..63, E 2 * (level + 2) + I, H 0..3,
                             * or anywhere in a byte; two bytes of each for the mixed pairs */
                            int E = 0, I = 0, H = 0;
                            for (int b = 0; b < 2; b++) {
                                const uint32_t r = check_rand(&state);
                                const int i = trial % 4 == 3 ? (int)(r & 255) : 1 + (int)(r % 63);
                                const int e = trial % 4 == 3 ? (int)((r >> 8) & 255) : 2 * (2 + (int)((r >> 8) % 64)) + i;
                                const int h = trial % 4 == 3 ? (int)((r >> 16) & 255) : (int)((r >> 16) % 4);
                                E |= (e & 255) << (8 * b), I |= i << (8 * b), H |= h << (8 * b);
                            }
                            if (table != 2)
                                E &= 255, I &= 255, H &= 255;
                            fill_area(start, SIZE, STRIDE, kind, dir == 0, &state);
                            memcpy(out_ref, start, SIZE);
                            memcpy(out_simd, start, SIZE);
                            /* the edge at row or column 16; 16 pixels along it start at 8 */
                            uint8_t *at_ref = dir == 0 ? out_ref + 8 * STRIDE + 16 : out_ref + 16 * STRIDE + 8;
                            uint8_t *at_simd = dir == 0 ? out_simd + 8 * STRIDE + 16 : out_simd + 16 * STRIDE + 8;
                            f_ref(at_ref, STRIDE, E, I, H);
                            f_simd(at_simd, STRIDE, E, I, H);
                            if (memcmp(out_ref, out_simd, SIZE))
                                return 1 + kind * 1000 + table * 100 + index * 10 + dir;
                        }
    return 0;
}
#endif
