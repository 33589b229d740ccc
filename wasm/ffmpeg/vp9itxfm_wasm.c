/*
 * VP9 inverse transforms added to the prediction (8-bit: DCT and ADST at 4x4, 8x8 and 16x16 in
 * every pairing, the 32x32 DCT and the DC-only forms) in wasm SIMD128. Tandem's own code, copied
 * into libavcodec/ by wasm/build.sh and installed by wasm-simd-hooks.patch from ff_vp9dsp_init();
 * every output equals vp9dsp_template.c's C, which ff_vp9_itxfm_wasm_check() asserts inside the
 * module (test/unit/simd-check.test.ts).
 *
 * How the lanes follow the C. Each 1-D transform of the VP9 specification is a fixed sequence of
 * 32-bit products, sums and rounding shifts (x + 2^13) >> 14; here four of them run side by side,
 * one per i32 lane, with the same products and sums. The lanes wrap like the C's int and unsigned
 * arithmetic, and a sum taken in another order wraps to the same 32 bits, so even coefficients no
 * stream would carry (anywhere in int16) give the C's result. The C stores each pass's outputs in
 * int16 (its intermediate block and output row); the lanes truncate to 16 bits at the same two
 * places. The first pass transforms four columns at a time and stores them transposed, so that
 * the second pass reads four columns of its input as rows; a group of columns whose coefficients
 * are all zero transforms to zeros (every rounding of 0 is 0) and is skipped, which is most of a
 * 32x32 or 16x16 block at the bitrates video is coded at.
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

static av_always_inline V add(V a, V b) { return wasm_i32x4_add(a, b); }
static av_always_inline V sub(V a, V b) { return wasm_i32x4_sub(a, b); }
static av_always_inline V neg(V a) { return wasm_i32x4_neg(a); }
static av_always_inline V mul(V a, int c) { return wasm_i32x4_mul(a, wasm_i32x4_splat(c)); }
/* (x + 2^13) >> 14, the rounding after every product */
static av_always_inline V r14(V x) { return wasm_i32x4_shr(wasm_i32x4_add(x, wasm_i32x4_splat(1 << 13)), 14); }
/* r14(a * ca + b * cb) and r14(a * ca - b * cb): the rotations of the butterflies */
static av_always_inline V rp(V a, int ca, V b, int cb) { return r14(add(mul(a, ca), mul(b, cb))); }
static av_always_inline V rm(V a, int ca, V b, int cb) { return r14(sub(mul(a, ca), mul(b, cb))); }
/* the value an int16 store would keep, sign-extended back */
static av_always_inline V trunc16(V x) { return wasm_i32x4_shr(wasm_i32x4_shl(x, 16), 16); }

/* ---- the 1-D transforms, in[] to out[], one column per lane ---- */

static av_always_inline void idct4(const V *in, V *out)
{
    const V t0 = r14(mul(add(in[0], in[2]), 11585));
    const V t1 = r14(mul(sub(in[0], in[2]), 11585));
    const V t2 = rm(in[1], 6270, in[3], 15137);
    const V t3 = rp(in[1], 15137, in[3], 6270);
    out[0] = add(t0, t3);
    out[1] = add(t1, t2);
    out[2] = sub(t1, t2);
    out[3] = sub(t0, t3);
}

static av_always_inline void iadst4(const V *in, V *out)
{
    const V s0 = add(add(mul(in[0], 5283), mul(in[2], 15212)), mul(in[3], 9929));
    const V s1 = sub(sub(mul(in[0], 9929), mul(in[2], 5283)), mul(in[3], 15212));
    const V s2 = mul(add(sub(in[0], in[2]), in[3]), 13377);
    const V s3 = mul(in[1], 13377);
    out[0] = r14(add(s0, s3));
    out[1] = r14(add(s1, s3));
    out[2] = r14(s2);
    out[3] = r14(sub(add(s0, s1), s3));
}

/* The even half of an 8-point DCT, given its four inputs (0, 2, 4, 6 of the 8). */
static av_always_inline void idct8_even(V i0, V i2, V i4, V i6, V *e)
{
    const V a0 = r14(mul(add(i0, i4), 11585)), a1 = r14(mul(sub(i0, i4), 11585));
    const V a2 = rm(i2, 6270, i6, 15137), a3 = rp(i2, 15137, i6, 6270);
    e[0] = add(a0, a3);
    e[1] = add(a1, a2);
    e[2] = sub(a1, a2);
    e[3] = sub(a0, a3);
}

static av_always_inline void idct8(const V *in, V *out)
{
    V e[4];
    idct8_even(in[0], in[2], in[4], in[6], e);
    const V t4a = rm(in[1], 3196, in[7], 16069), t7a = rp(in[1], 16069, in[7], 3196);
    const V t5a = rm(in[5], 13623, in[3], 9102), t6a = rp(in[5], 9102, in[3], 13623);
    const V t4 = add(t4a, t5a), d5 = sub(t4a, t5a), t7 = add(t7a, t6a), d6 = sub(t7a, t6a);
    const V t5 = r14(mul(sub(d6, d5), 11585)), t6 = r14(mul(add(d6, d5), 11585));
    out[0] = add(e[0], t7);
    out[1] = add(e[1], t6);
    out[2] = add(e[2], t5);
    out[3] = add(e[3], t4);
    out[4] = sub(e[3], t4);
    out[5] = sub(e[2], t5);
    out[6] = sub(e[1], t6);
    out[7] = sub(e[0], t7);
}

static av_always_inline void iadst8(const V *in, V *out)
{
    const V s0 = add(mul(in[7], 16305), mul(in[0], 1606)), s1 = sub(mul(in[7], 1606), mul(in[0], 16305));
    const V s2 = add(mul(in[5], 14449), mul(in[2], 7723)), s3 = sub(mul(in[5], 7723), mul(in[2], 14449));
    const V s4 = add(mul(in[3], 10394), mul(in[4], 12665)), s5 = sub(mul(in[3], 12665), mul(in[4], 10394));
    const V s6 = add(mul(in[1], 4756), mul(in[6], 15679)), s7 = sub(mul(in[1], 15679), mul(in[6], 4756));
    const V t0 = r14(add(s0, s4)), t1 = r14(add(s1, s5)), t2 = r14(add(s2, s6)), t3 = r14(add(s3, s7));
    const V t4 = r14(sub(s0, s4)), t5 = r14(sub(s1, s5)), t6 = r14(sub(s2, s6)), t7 = r14(sub(s3, s7));
    const V u4 = add(mul(t4, 15137), mul(t5, 6270)), u5 = sub(mul(t4, 6270), mul(t5, 15137));
    const V u6 = sub(mul(t7, 15137), mul(t6, 6270)), u7 = add(mul(t7, 6270), mul(t6, 15137));
    out[0] = add(t0, t2);
    out[7] = neg(add(t1, t3));
    const V d2 = sub(t0, t2), d3 = sub(t1, t3);
    out[1] = neg(r14(add(u4, u6)));
    out[6] = r14(add(u5, u7));
    const V w6 = r14(sub(u4, u6)), w7 = r14(sub(u5, u7));
    out[3] = neg(r14(mul(add(d2, d3), 11585)));
    out[4] = r14(mul(sub(d2, d3), 11585));
    out[2] = r14(mul(add(w6, w7), 11585));
    out[5] = neg(r14(mul(sub(w6, w7), 11585)));
}

/* The even half of a 16-point DCT (its inputs 0, 2, ..., 14 are an 8-point DCT's). */
static av_always_inline void idct16_even(V i0, V i2, V i4, V i6, V i8, V i10, V i12, V i14, V *e)
{
    const V in8[8] = {i0, i2, i4, i6, i8, i10, i12, i14};
    idct8(in8, e);
}

static av_always_inline void idct16(const V *in, V *out)
{
    V e[8];
    idct16_even(in[0], in[2], in[4], in[6], in[8], in[10], in[12], in[14], e);
    const V t8a = rm(in[1], 1606, in[15], 16305), t15a = rp(in[1], 16305, in[15], 1606);
    const V t9a = rm(in[9], 12665, in[7], 10394), t14a = rp(in[9], 10394, in[7], 12665);
    const V t10a = rm(in[5], 7723, in[11], 14449), t13a = rp(in[5], 14449, in[11], 7723);
    const V t11a = rm(in[13], 15679, in[3], 4756), t12a = rp(in[13], 4756, in[3], 15679);
    const V t8 = add(t8a, t9a), t9 = sub(t8a, t9a), t10 = sub(t11a, t10a), t11 = add(t11a, t10a);
    const V t12 = add(t12a, t13a), t13 = sub(t12a, t13a), t14 = sub(t15a, t14a), t15 = add(t15a, t14a);
    const V u9 = rm(t14, 6270, t9, 15137), u14 = rp(t14, 15137, t9, 6270);
    const V u10 = r14(neg(add(mul(t13, 15137), mul(t10, 6270)))), u13 = rm(t13, 6270, t10, 15137);
    const V v8 = add(t8, t11), v9 = add(u9, u10), v10 = sub(u9, u10), v11 = sub(t8, t11);
    const V v12 = sub(t15, t12), v13 = sub(u14, u13), v14 = add(u14, u13), v15 = add(t15, t12);
    const V w10 = r14(mul(sub(v13, v10), 11585)), w13 = r14(mul(add(v13, v10), 11585));
    const V w11 = r14(mul(sub(v12, v11), 11585)), w12 = r14(mul(add(v12, v11), 11585));
    const V odd[8] = {v15, v14, w13, w12, w11, w10, v9, v8};
    for (int k = 0; k < 8; k++) {
        out[k] = add(e[k], odd[k]);
        out[15 - k] = sub(e[k], odd[k]);
    }
}

static av_always_inline void iadst16(const V *in, V *out)
{
    const V s0 = add(mul(in[15], 16364), mul(in[0], 804)), s1 = sub(mul(in[15], 804), mul(in[0], 16364));
    const V s2 = add(mul(in[13], 15893), mul(in[2], 3981)), s3 = sub(mul(in[13], 3981), mul(in[2], 15893));
    const V s4 = add(mul(in[11], 14811), mul(in[4], 7005)), s5 = sub(mul(in[11], 7005), mul(in[4], 14811));
    const V s6 = add(mul(in[9], 13160), mul(in[6], 9760)), s7 = sub(mul(in[9], 9760), mul(in[6], 13160));
    const V s8 = add(mul(in[7], 11003), mul(in[8], 12140)), s9 = sub(mul(in[7], 12140), mul(in[8], 11003));
    const V s10 = add(mul(in[5], 8423), mul(in[10], 14053)), s11 = sub(mul(in[5], 14053), mul(in[10], 8423));
    const V s12 = add(mul(in[3], 5520), mul(in[12], 15426)), s13 = sub(mul(in[3], 15426), mul(in[12], 5520));
    const V s14 = add(mul(in[1], 2404), mul(in[14], 16207)), s15 = sub(mul(in[1], 16207), mul(in[14], 2404));
    /* stage 1 */
    const V a0 = r14(add(s0, s8)), a1 = r14(add(s1, s9)), a2 = r14(add(s2, s10)), a3 = r14(add(s3, s11));
    const V a4 = r14(add(s4, s12)), a5 = r14(add(s5, s13)), a6 = r14(add(s6, s14)), a7 = r14(add(s7, s15));
    const V a8 = r14(sub(s0, s8)), a9 = r14(sub(s1, s9)), a10 = r14(sub(s2, s10)), a11 = r14(sub(s3, s11));
    const V a12 = r14(sub(s4, s12)), a13 = r14(sub(s5, s13)), a14 = r14(sub(s6, s14)), a15 = r14(sub(s7, s15));
    /* stage 2: the low half is summed, the high half rotated by the 8-point angles */
    const V b8 = add(mul(a8, 16069), mul(a9, 3196)), b9 = sub(mul(a8, 3196), mul(a9, 16069));
    const V b10 = add(mul(a10, 9102), mul(a11, 13623)), b11 = sub(mul(a10, 13623), mul(a11, 9102));
    const V b12 = sub(mul(a13, 16069), mul(a12, 3196)), b13 = add(mul(a13, 3196), mul(a12, 16069));
    const V b14 = sub(mul(a15, 9102), mul(a14, 13623)), b15 = add(mul(a15, 13623), mul(a14, 9102));
    const V c0 = add(a0, a4), c1 = add(a1, a5), c2 = add(a2, a6), c3 = add(a3, a7);
    const V c4 = sub(a0, a4), c5 = sub(a1, a5), c6 = sub(a2, a6), c7 = sub(a3, a7);
    const V c8 = r14(add(b8, b12)), c9 = r14(add(b9, b13)), c10 = r14(add(b10, b14)), c11 = r14(add(b11, b15));
    const V c12 = r14(sub(b8, b12)), c13 = r14(sub(b9, b13)), c14 = r14(sub(b10, b14)), c15 = r14(sub(b11, b15));
    /* stage 3: rotations by the 4-point angle */
    const V d4 = add(mul(c4, 15137), mul(c5, 6270)), d5 = sub(mul(c4, 6270), mul(c5, 15137));
    const V d6 = sub(mul(c7, 15137), mul(c6, 6270)), d7 = add(mul(c7, 6270), mul(c6, 15137));
    const V d12 = add(mul(c12, 15137), mul(c13, 6270)), d13 = sub(mul(c12, 6270), mul(c13, 15137));
    const V d14 = sub(mul(c15, 15137), mul(c14, 6270)), d15 = add(mul(c15, 6270), mul(c14, 15137));
    out[0] = add(c0, c2);
    out[15] = neg(add(c1, c3));
    const V e2 = sub(c0, c2), e3 = sub(c1, c3);
    out[3] = neg(r14(add(d4, d6)));
    out[12] = r14(add(d5, d7));
    const V e6 = r14(sub(d4, d6)), e7 = r14(sub(d5, d7));
    out[1] = neg(add(c8, c10));
    out[14] = add(c9, c11);
    const V e10 = sub(c8, c10), e11 = sub(c9, c11);
    out[2] = r14(add(d12, d14));
    out[13] = neg(r14(add(d13, d15)));
    const V e14 = r14(sub(d12, d14)), e15 = r14(sub(d13, d15));
    /* stage 4: the last rotations by pi/4 */
    out[7] = r14(mul(neg(add(e2, e3)), 11585));
    out[8] = r14(mul(sub(e2, e3), 11585));
    out[4] = r14(mul(add(e7, e6), 11585));
    out[11] = r14(mul(sub(e7, e6), 11585));
    out[6] = r14(mul(add(e11, e10), 11585));
    out[9] = r14(mul(sub(e11, e10), 11585));
    out[5] = r14(mul(neg(add(e14, e15)), 11585));
    out[10] = r14(mul(sub(e14, e15), 11585));
}

static av_always_inline void idct32(const V *in, V *out)
{
    V e[16];
    const V even[16] = {in[0], in[2], in[4], in[6], in[8], in[10], in[12], in[14],
                        in[16], in[18], in[20], in[22], in[24], in[26], in[28], in[30]};
    idct16(even, e);
    /* the odd half: 16 inputs rotated, then four butterfly stages */
    const V t16a = rm(in[1], 804, in[31], 16364), t31a = rp(in[1], 16364, in[31], 804);
    const V t17a = rm(in[17], 12140, in[15], 11003), t30a = rp(in[17], 11003, in[15], 12140);
    const V t18a = rm(in[9], 7005, in[23], 14811), t29a = rp(in[9], 14811, in[23], 7005);
    const V t19a = rm(in[25], 15426, in[7], 5520), t28a = rp(in[25], 5520, in[7], 15426);
    const V t20a = rm(in[5], 3981, in[27], 15893), t27a = rp(in[5], 15893, in[27], 3981);
    const V t21a = rm(in[21], 14053, in[11], 8423), t26a = rp(in[21], 8423, in[11], 14053);
    const V t22a = rm(in[13], 9760, in[19], 13160), t25a = rp(in[13], 13160, in[19], 9760);
    const V t23a = rm(in[29], 16207, in[3], 2404), t24a = rp(in[29], 2404, in[3], 16207);

    const V a16 = add(t16a, t17a), a17 = sub(t16a, t17a), a18 = sub(t19a, t18a), a19 = add(t19a, t18a);
    const V a20 = add(t20a, t21a), a21 = sub(t20a, t21a), a22 = sub(t23a, t22a), a23 = add(t23a, t22a);
    const V a24 = add(t24a, t25a), a25 = sub(t24a, t25a), a26 = sub(t27a, t26a), a27 = add(t27a, t26a);
    const V a28 = add(t28a, t29a), a29 = sub(t28a, t29a), a30 = sub(t31a, t30a), a31 = add(t31a, t30a);

    const V b17 = rm(a30, 3196, a17, 16069), b30 = rp(a30, 16069, a17, 3196);
    const V b18 = r14(neg(add(mul(a29, 16069), mul(a18, 3196)))), b29 = rm(a29, 3196, a18, 16069);
    const V b21 = rm(a26, 13623, a21, 9102), b26 = rp(a26, 9102, a21, 13623);
    const V b22 = r14(neg(add(mul(a25, 9102), mul(a22, 13623)))), b25 = rm(a25, 13623, a22, 9102);

    const V c16 = add(a16, a19), c17 = add(b17, b18), c18 = sub(b17, b18), c19 = sub(a16, a19);
    const V c20 = sub(a23, a20), c21 = sub(b22, b21), c22 = add(b22, b21), c23 = add(a23, a20);
    const V c24 = add(a24, a27), c25 = add(b25, b26), c26 = sub(b25, b26), c27 = sub(a24, a27);
    const V c28 = sub(a31, a28), c29 = sub(b30, b29), c30 = add(b30, b29), c31 = add(a31, a28);

    const V d18 = rm(c29, 6270, c18, 15137), d29 = rp(c29, 15137, c18, 6270);
    const V d19 = rm(c28, 6270, c19, 15137), d28 = rp(c28, 15137, c19, 6270);
    const V d20 = r14(neg(add(mul(c27, 15137), mul(c20, 6270)))), d27 = rm(c27, 6270, c20, 15137);
    const V d21 = r14(neg(add(mul(c26, 15137), mul(c21, 6270)))), d26 = rm(c26, 6270, c21, 15137);

    const V f16 = add(c16, c23), f17 = add(c17, c22), f18 = add(d18, d21), f19 = add(d19, d20);
    const V f20 = sub(d19, d20), f21 = sub(d18, d21), f22 = sub(c17, c22), f23 = sub(c16, c23);
    const V f24 = sub(c31, c24), f25 = sub(c30, c25), f26 = sub(d29, d26), f27 = sub(d28, d27);
    const V f28 = add(d28, d27), f29 = add(d29, d26), f30 = add(c30, c25), f31 = add(c31, c24);

    const V g20 = r14(mul(sub(f27, f20), 11585)), g27 = r14(mul(add(f27, f20), 11585));
    const V g21 = r14(mul(sub(f26, f21), 11585)), g26 = r14(mul(add(f26, f21), 11585));
    const V g22 = r14(mul(sub(f25, f22), 11585)), g25 = r14(mul(add(f25, f22), 11585));
    const V g23 = r14(mul(sub(f24, f23), 11585)), g24 = r14(mul(add(f24, f23), 11585));

    const V odd[16] = {f31, f30, f29, f28, g27, g26, g25, g24, g23, g22, g21, g20, f19, f18, f17, f16};
    for (int k = 0; k < 16; k++) {
        out[k] = add(e[k], odd[k]);
        out[31 - k] = sub(e[k], odd[k]);
    }
}

/* ---- the two passes ---- */

/* in[k] = coefficients k * sz + c ... + 3 (four columns) for k < rows, zero past them; whether
 * any is nonzero. */
static av_always_inline int load_columns(V *in, const int16_t *block, int c, int sz, int rows)
{
    V any = wasm_i32x4_splat(0);
    for (int k = 0; k < sz; k++) {
        in[k] = k < rows ? wasm_i32x4_load16x4(block + k * sz + c) : wasm_i32x4_splat(0);
        any = wasm_v128_or(any, in[k]);
    }
    return wasm_v128_any_true(any);
}

/* The rows of coefficients up to the last that has a nonzero one. */
static av_always_inline int coefficient_rows(const int16_t *block, int sz)
{
    for (int k = sz - 1; k > 0; k--) {
        V row = sz == 4 ? wasm_v128_load64_zero(block + k * sz) : wasm_v128_load(block + k * sz);
        for (int i = 8; i < sz; i += 8)
            row = wasm_v128_or(row, wasm_v128_load(block + k * sz + i));
        if (wasm_v128_any_true(row))
            return k + 1;
    }
    return 1;
}

/* fn(in, out) where in[k] is zero for k >= n, with that zero known to the compiler in the branch
 * taken: most coefficients of a coded 16x16 or 32x32 block are zero, and their products vanish. */
#define SPARSE(fn, sz, in, out, n)                                                                 \
    do {                                                                                           \
        if (sz >= 8 && (n) <= sz / 4) {                                                            \
            for (int k_ = sz / 4; k_ < sz; k_++)                                                   \
                in[k_] = wasm_i32x4_splat(0);                                                      \
            fn(in, out);                                                                           \
        } else if (sz >= 8 && (n) <= sz / 2) {                                                     \
            for (int k_ = sz / 2; k_ < sz; k_++)                                                   \
                in[k_] = wasm_i32x4_splat(0);                                                      \
            fn(in, out);                                                                           \
        } else {                                                                                   \
            fn(in, out);                                                                           \
        }                                                                                          \
    } while (0)

/* Pass 1's outputs of columns c ... c + 3 (out[k], one column per lane), as the C's int16 block
 * holds them: row c + l of tmp is column c + l's outputs. */
static av_always_inline void store_transposed(int32_t *tmp, int c, const V *out, int sz)
{
    for (int k = 0; k < sz; k += 4) {
        const V a = trunc16(out[k]), b = trunc16(out[k + 1]), x = trunc16(out[k + 2]), y = trunc16(out[k + 3]);
        const V ab0 = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), ab1 = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
        const V xy0 = wasm_i32x4_shuffle(x, y, 0, 4, 1, 5), xy1 = wasm_i32x4_shuffle(x, y, 2, 6, 3, 7);
        wasm_v128_store(tmp + (c + 0) * sz + k, wasm_i32x4_shuffle(ab0, xy0, 0, 1, 4, 5));
        wasm_v128_store(tmp + (c + 1) * sz + k, wasm_i32x4_shuffle(ab0, xy0, 2, 3, 6, 7));
        wasm_v128_store(tmp + (c + 2) * sz + k, wasm_i32x4_shuffle(ab1, xy1, 0, 1, 4, 5));
        wasm_v128_store(tmp + (c + 3) * sz + k, wasm_i32x4_shuffle(ab1, xy1, 2, 3, 6, 7));
    }
}

static av_always_inline void zero_rows(int32_t *tmp, int c, int sz)
{
    memset(tmp + c * sz, 0, 4 * sz * sizeof(*tmp));
}

/* Pass 2's outputs (out[j]: row j, one column per lane) added to dst's columns 0 ... 3, rounded
 * by `bits` after the C's int16 store, and clipped to 0 ... 255. */
static av_always_inline void add_rows(uint8_t *dst, ptrdiff_t stride, const V *out, int sz, int bits)
{
    const V half = wasm_i32x4_splat(1 << (bits - 1));
    for (int j = 0; j < sz; j++) {
        uint8_t *p = dst + j * stride;
        const V v = wasm_i32x4_shr(add(trunc16(out[j]), half), bits);
        const V px = wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(p)));
        const V s16 = wasm_i16x8_narrow_i32x4(add(px, v), add(px, v));
        wasm_v128_store32_lane(p, wasm_u8x16_narrow_i16x8(s16, s16), 0);
    }
}

/* A block with only its DC coefficient (eob 1): one value added to every pixel. */
static av_always_inline void dc_only_add(uint8_t *dst, ptrdiff_t stride, int16_t *block, int sz, int bits)
{
    const int t = ((((int)block[0] * 11585 + (1 << 13)) >> 14) * 11585 + (1 << 13)) >> 14;
    const int value = (int)(t + (1U << (bits - 1))) >> bits;
    block[0] = 0;
    /* |value| <= 2^14 (t is a 16-bit coefficient scaled by about 1/2), so the 16-bit add is exact */
    const V dc = wasm_i16x8_splat((int16_t)value);
    for (int j = 0; j < sz; j++, dst += stride) {
        if (sz == 4) {
            const V s = wasm_i16x8_add(wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(dst)), dc);
            wasm_v128_store32_lane(dst, wasm_u8x16_narrow_i16x8(s, s), 0);
        } else if (sz == 8) {
            const V s = wasm_i16x8_add(wasm_u16x8_extend_low_u8x16(wasm_v128_load64_zero(dst)), dc);
            wasm_v128_store64_lane(dst, wasm_u8x16_narrow_i16x8(s, s), 0);
        } else {
            for (int i = 0; i < sz; i += 16) {
                const V px = wasm_v128_load(dst + i);
                const V lo = wasm_i16x8_add(wasm_u16x8_extend_low_u8x16(px), dc);
                const V hi = wasm_i16x8_add(wasm_u16x8_extend_high_u8x16(px), dc);
                wasm_v128_store(dst + i, wasm_u8x16_narrow_i16x8(lo, hi));
            }
        }
    }
}

/* Pass 1 transforms the columns (first) and pass 2 the rows (second), as the C's wrapper does. */
#define ITXFM(first, second, sz, bits, has_dc_only)                                                \
static void first##_##second##_##sz##x##sz##_add_wasm(uint8_t *dst, ptrdiff_t stride,              \
                                                      int16_t *block, int eob)                     \
{                                                                                                  \
    int32_t tmp[sz * sz] __attribute__((aligned(16)));                                             \
    V in[sz], out[sz];                                                                             \
    if (has_dc_only && eob == 1) {                                                                 \
        dc_only_add(dst, stride, block, sz, bits);                                                 \
        return;                                                                                    \
    }                                                                                              \
    const int rows = coefficient_rows(block, sz);                                                  \
    int columns = 0;                                                                               \
    for (int c = 0; c < sz; c += 4) {                                                              \
        if (load_columns(in, block, c, sz, rows)) {                                                \
            SPARSE(first##sz, sz, in, out, rows);                                                  \
            store_transposed(tmp, c, out, sz);                                                     \
            columns = c + 4;                                                                       \
        } else {                                                                                   \
            zero_rows(tmp, c, sz);                                                                 \
        }                                                                                          \
    }                                                                                              \
    memset(block, 0, sz * sz * sizeof(*block));                                                    \
    for (int c = 0; c < sz; c += 4) {                                                              \
        for (int k = 0; k < sz; k++)                                                               \
            in[k] = wasm_v128_load(tmp + k * sz + c);                                              \
        SPARSE(second##sz, sz, in, out, columns);                                                  \
        add_rows(dst + c, stride, out, sz, bits);                                                  \
    }                                                                                              \
}

#define ITXFM_ALL(sz, bits)                                                                        \
    ITXFM(idct, idct, sz, bits, 1)                                                                 \
    ITXFM(iadst, idct, sz, bits, 0)                                                                \
    ITXFM(idct, iadst, sz, bits, 0)                                                                \
    ITXFM(iadst, iadst, sz, bits, 0)

ITXFM_ALL(4, 4)
ITXFM_ALL(8, 5)
ITXFM_ALL(16, 6)
ITXFM(idct, idct, 32, 6, 1)

void ff_vp9dsp_itxfm_init_wasm(VP9DSPContext *dsp, int bpp)
{
    if (bpp != 8)
        return;
#define SET(tx, sz)                                                                                \
    dsp->itxfm_add[tx][DCT_DCT]   = idct_idct_##sz##_add_wasm;                                     \
    dsp->itxfm_add[tx][DCT_ADST]  = iadst_idct_##sz##_add_wasm;                                    \
    dsp->itxfm_add[tx][ADST_DCT]  = idct_iadst_##sz##_add_wasm;                                    \
    dsp->itxfm_add[tx][ADST_ADST] = iadst_iadst_##sz##_add_wasm
    SET(TX_4X4, 4x4);
    SET(TX_8X8, 8x8);
    SET(TX_16X16, 16x16);
#undef SET
    dsp->itxfm_add[TX_32X32][DCT_DCT] = dsp->itxfm_add[TX_32X32][DCT_ADST] =
        dsp->itxfm_add[TX_32X32][ADST_DCT] = dsp->itxfm_add[TX_32X32][ADST_ADST] = idct_idct_32x32_add_wasm;
}

/* ---- the check: every replaced transform against ff_vp9dsp_init_8's C on the same inputs ---- */

/* Coefficients for round `round`: anywhere in int16 (every fourth round), small values in the
 * low frequencies the way coded blocks carry them, or a random count of them anywhere; the eob
 * the decoder would pass (1 for a DC-only block). */
static int fill_coefficients(int16_t *block, int sz, int round, int variant, uint32_t *state)
{
    memset(block, 0, sz * sz * sizeof(*block));
    if (variant == 0) { /* DC only */
        block[0] = (int16_t)check_rand(state);
        return 1;
    }
    if (round % 4 == 3) { /* every coefficient, anywhere in int16 */
        for (int i = 0; i < sz * sz; i++)
            block[i] = (int16_t)check_rand(state);
        return sz * sz;
    }
    const int span = variant == 1 ? (sz < 8 ? sz : 8) : sz; /* low frequencies, or anywhere */
    const int count = 2 + check_rand(state) % (variant == 1 ? span * span : 24);
    const int range = 1 << (4 + check_rand(state) % 9); /* magnitudes up to 2^12 */
    for (int n = 0; n < count; n++) {
        const uint32_t r = check_rand(state);
        const int at = (r % span) * sz + (r >> 8) % span;
        block[at] = (int16_t)((int)(check_rand(state) % (2 * range + 1)) - range);
    }
    return count;
}

/* Returns 0 when every output (and the cleared block) equals the C's, else 1 + the first case that
 * differs, as tx * 1000 + type * 100 + variant * 10 + round % 10. Eight blocks of each kind per
 * round: a rounding constant one off changes only some outputs of small coefficients. */
int ff_vp9_itxfm_wasm_check(unsigned seed, int rounds)
{
    enum { STRIDE = 48 };
    VP9DSPContext ref, simd;
    int16_t block_ref[32 * 32], block_simd[32 * 32];
    uint8_t out_ref[STRIDE * 32], out_simd[STRIDE * 32];
    uint32_t state = seed * 7919u + 11;
    ff_vp9dsp_init_8(&ref);
    simd = ref;
    ff_vp9dsp_itxfm_init_wasm(&simd, 8);
    for (int round = 0; round < rounds; round++)
        for (int tx = 0; tx < 4; tx++)
            for (int type = 0; type < 4; type++)
                for (int variant = 0; variant < 3; variant++)
                    for (int trial = 0; trial < 8; trial++) {
                        const int sz = 4 << tx;
                        if (ref.itxfm_add[tx][type] == simd.itxfm_add[tx][type])
                            continue;
                        const int eob = fill_coefficients(block_ref, sz, round, variant, &state);
                        memcpy(block_simd, block_ref, sizeof(block_ref));
                        check_fill(out_ref, sizeof(out_ref), &state, round % 3 == 2);
                        memcpy(out_simd, out_ref, sizeof(out_ref));
                        ref.itxfm_add[tx][type](out_ref + 8, STRIDE, block_ref, eob);
                        simd.itxfm_add[tx][type](out_simd + 8, STRIDE, block_simd, eob);
                        if (memcmp(out_ref, out_simd, sizeof(out_ref)) ||
                            memcmp(block_ref, block_simd, sizeof(block_ref)))
                            return 1 + tx * 1000 + type * 100 + variant * 10 + round % 10;
                    }
    return 0;
}
#endif
