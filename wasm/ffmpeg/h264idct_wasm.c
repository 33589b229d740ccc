/*
 * H.264 8-bit inverse transforms and their add to the prediction, in wasm SIMD128, for Tandem's
 * decode module: the 4x4 and 8x8 IDCTs, their DC-only forms, and the per-macroblock loops over
 * them (luma, intra luma, 8x8 luma, 4:2:0 chroma). Bit-exact with h264idct_template.c, which
 * ff_h264_idct_wasm_check() asserts inside the module.
 *
 * Exactness: the C stores its first pass into the int16_t block (so it wraps to 16 bits) and runs
 * its second pass in int. The 4x4 first pass uses only +, - and >>1 of int16 inputs, so 16-bit
 * lanes that wrap give the same low bits; the 8x8 first pass shifts 32-bit sums (a7 >> 2), so it
 * runs in 32-bit lanes and keeps their low 16 bits. Both second passes run in 32-bit lanes. From
 * int16 inputs the second pass's results stay within +-4032 after >> 6, so the saturating
 * narrows to 16 bits never saturate, and the last, unsigned one is av_clip_uint8.
 */
#include "config.h"
#include "h264dsp.h"

#include <string.h>
#include <wasm_simd128.h>

#include "h264_parse.h"
#include "h264idct.h"
#include "simd_check_wasm.h"

/* Adds 4 (or 8) 16-bit values to 4 (or 8) pixels and stores them clipped to 0..255. */
static inline void add_row4(uint8_t *dst, v128_t v)
{
    const v128_t px = wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(dst));
    wasm_v128_store32_lane(dst, wasm_u8x16_narrow_i16x8(wasm_i16x8_add(px, v), px), 0);
}

static inline void add_row8(uint8_t *dst, v128_t v)
{
    const v128_t px = wasm_u16x8_extend_low_u8x16(wasm_v128_load64_zero(dst));
    wasm_v128_store64_lane(dst, wasm_u8x16_narrow_i16x8(wasm_i16x8_add(px, v), px), 0);
}

static void idct4_add(uint8_t *dst, int16_t *block, int stride)
{
    block[0] += 1 << 5;
    const v128_t r0 = wasm_v128_load64_zero(block), r1 = wasm_v128_load64_zero(block + 4);
    const v128_t r2 = wasm_v128_load64_zero(block + 8), r3 = wasm_v128_load64_zero(block + 12);
    /* First pass down the columns (a lane is a column), wrapping as the int16 block does. */
    const v128_t z0 = wasm_i16x8_add(r0, r2), z1 = wasm_i16x8_sub(r0, r2);
    const v128_t z2 = wasm_i16x8_sub(wasm_i16x8_shr(r1, 1), r3), z3 = wasm_i16x8_add(r1, wasm_i16x8_shr(r3, 1));
    const v128_t s0 = wasm_i16x8_add(z0, z3), s1 = wasm_i16x8_add(z1, z2);
    const v128_t s2 = wasm_i16x8_sub(z1, z2), s3 = wasm_i16x8_sub(z0, z3);
    /* Transpose: c01 holds columns 0 and 1 (a lane is a row), c23 columns 2 and 3. */
    const v128_t t0 = wasm_i16x8_shuffle(s0, s1, 0, 8, 1, 9, 2, 10, 3, 11);
    const v128_t t1 = wasm_i16x8_shuffle(s2, s3, 0, 8, 1, 9, 2, 10, 3, 11);
    const v128_t c01 = wasm_i32x4_shuffle(t0, t1, 0, 4, 1, 5), c23 = wasm_i32x4_shuffle(t0, t1, 2, 6, 3, 7);
    const v128_t c0 = wasm_i32x4_extend_low_i16x8(c01), c1 = wasm_i32x4_extend_high_i16x8(c01);
    const v128_t c2 = wasm_i32x4_extend_low_i16x8(c23), c3 = wasm_i32x4_extend_high_i16x8(c23);
    /* Second pass along the rows in 32 bits; lane i of output k lands on dst row k, column i. */
    const v128_t y0 = wasm_i32x4_add(c0, c2), y1 = wasm_i32x4_sub(c0, c2);
    const v128_t y2 = wasm_i32x4_sub(wasm_i32x4_shr(c1, 1), c3), y3 = wasm_i32x4_add(c1, wasm_i32x4_shr(c3, 1));
    const v128_t o01 = wasm_i16x8_narrow_i32x4(wasm_i32x4_shr(wasm_i32x4_add(y0, y3), 6), wasm_i32x4_shr(wasm_i32x4_add(y1, y2), 6));
    const v128_t o23 = wasm_i16x8_narrow_i32x4(wasm_i32x4_shr(wasm_i32x4_sub(y1, y2), 6), wasm_i32x4_shr(wasm_i32x4_sub(y0, y3), 6));
    add_row4(dst, o01);
    add_row4(dst + stride, wasm_i64x2_shuffle(o01, o01, 1, 0));
    add_row4(dst + 2 * stride, o23);
    add_row4(dst + 3 * stride, wasm_i64x2_shuffle(o23, o23, 1, 0));
    memset(block, 0, 16 * sizeof(int16_t));
}

/* One 8-point pass of the 8x8 IDCT over four lanes in 32 bits: x[0..7] in, out[0..7] out. */
static inline void idct8_pass(const v128_t x[8], v128_t out[8])
{
    const v128_t a0 = wasm_i32x4_add(x[0], x[4]), a2 = wasm_i32x4_sub(x[0], x[4]);
    const v128_t a4 = wasm_i32x4_sub(wasm_i32x4_shr(x[2], 1), x[6]), a6 = wasm_i32x4_add(wasm_i32x4_shr(x[6], 1), x[2]);
    const v128_t b0 = wasm_i32x4_add(a0, a6), b2 = wasm_i32x4_add(a2, a4);
    const v128_t b4 = wasm_i32x4_sub(a2, a4), b6 = wasm_i32x4_sub(a0, a6);
    const v128_t a1 = wasm_i32x4_sub(wasm_i32x4_sub(wasm_i32x4_sub(x[5], x[3]), x[7]), wasm_i32x4_shr(x[7], 1));
    const v128_t a3 = wasm_i32x4_sub(wasm_i32x4_sub(wasm_i32x4_add(x[1], x[7]), x[3]), wasm_i32x4_shr(x[3], 1));
    const v128_t a5 = wasm_i32x4_add(wasm_i32x4_add(wasm_i32x4_sub(x[7], x[1]), x[5]), wasm_i32x4_shr(x[5], 1));
    const v128_t a7 = wasm_i32x4_add(wasm_i32x4_add(wasm_i32x4_add(x[3], x[5]), x[1]), wasm_i32x4_shr(x[1], 1));
    const v128_t b1 = wasm_i32x4_add(wasm_i32x4_shr(a7, 2), a1), b3 = wasm_i32x4_add(a3, wasm_i32x4_shr(a5, 2));
    const v128_t b5 = wasm_i32x4_sub(wasm_i32x4_shr(a3, 2), a5), b7 = wasm_i32x4_sub(a7, wasm_i32x4_shr(a1, 2));
    out[0] = wasm_i32x4_add(b0, b7);
    out[7] = wasm_i32x4_sub(b0, b7);
    out[1] = wasm_i32x4_add(b2, b5);
    out[6] = wasm_i32x4_sub(b2, b5);
    out[2] = wasm_i32x4_add(b4, b3);
    out[5] = wasm_i32x4_sub(b4, b3);
    out[3] = wasm_i32x4_add(b6, b1);
    out[4] = wasm_i32x4_sub(b6, b1);
}

/* The low 16 bits of each 32-bit lane of lo (lanes 0-3) and hi (lanes 4-7): the int16 store. */
static inline v128_t low_halves(v128_t lo, v128_t hi)
{
    return wasm_i8x16_shuffle(lo, hi, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29);
}

static void idct8_add(uint8_t *dst, int16_t *block, int stride)
{
    block[0] += 32;
    v128_t lo[8], hi[8], out_lo[8], out_hi[8], rows[8];
    for (int k = 0; k < 8; k++) {
        const v128_t r = wasm_v128_load(block + 8 * k);
        lo[k] = wasm_i32x4_extend_low_i16x8(r);
        hi[k] = wasm_i32x4_extend_high_i16x8(r);
    }
    /* First pass down the columns (a lane is a column), kept to 16 bits as the block keeps it. */
    idct8_pass(lo, out_lo);
    idct8_pass(hi, out_hi);
    for (int k = 0; k < 8; k++)
        rows[k] = low_halves(out_lo[k], out_hi[k]);
    /* Transpose 8x8 in three rounds of interleaves: afterwards rows[j] is column j. */
    v128_t a[8], b[8];
    for (int k = 0; k < 4; k++) {
        a[2 * k] = wasm_i16x8_shuffle(rows[2 * k], rows[2 * k + 1], 0, 8, 1, 9, 2, 10, 3, 11);
        a[2 * k + 1] = wasm_i16x8_shuffle(rows[2 * k], rows[2 * k + 1], 4, 12, 5, 13, 6, 14, 7, 15);
    }
    for (int k = 0; k < 2; k++)
        for (int h = 0; h < 2; h++) {
            b[4 * k + 2 * h] = wasm_i32x4_shuffle(a[4 * k + h], a[4 * k + 2 + h], 0, 4, 1, 5);
            b[4 * k + 2 * h + 1] = wasm_i32x4_shuffle(a[4 * k + h], a[4 * k + 2 + h], 2, 6, 3, 7);
        }
    for (int j = 0; j < 4; j++) {
        rows[2 * j] = wasm_i64x2_shuffle(b[j], b[4 + j], 0, 2);
        rows[2 * j + 1] = wasm_i64x2_shuffle(b[j], b[4 + j], 1, 3);
    }
    /* Second pass along the rows in 32 bits; lane i of output k lands on dst row k, column i. */
    for (int j = 0; j < 8; j++) {
        lo[j] = wasm_i32x4_extend_low_i16x8(rows[j]);
        hi[j] = wasm_i32x4_extend_high_i16x8(rows[j]);
    }
    idct8_pass(lo, out_lo);
    idct8_pass(hi, out_hi);
    for (int k = 0; k < 8; k++)
        add_row8(dst + k * stride, wasm_i16x8_narrow_i32x4(wasm_i32x4_shr(out_lo[k], 6), wasm_i32x4_shr(out_hi[k], 6)));
    memset(block, 0, 64 * sizeof(int16_t));
}

static void idct4_dc_add(uint8_t *dst, int16_t *block, int stride)
{
    const v128_t dc = wasm_i16x8_splat((int16_t)((block[0] + 32) >> 6));
    block[0] = 0;
    for (int k = 0; k < 4; k++)
        add_row4(dst + k * stride, dc);
}

static void idct8_dc_add(uint8_t *dst, int16_t *block, int stride)
{
    const v128_t dc = wasm_i16x8_splat((int16_t)((block[0] + 32) >> 6));
    block[0] = 0;
    for (int k = 0; k < 8; k++)
        add_row8(dst + k * stride, dc);
}

/* The per-macroblock loops, as the C's, over the SIMD transforms. */
static void idct_add16(uint8_t *dst, const int *block_offset, int16_t *block, int stride, const uint8_t nnzc[5 * 8])
{
    for (int i = 0; i < 16; i++) {
        const int nnz = nnzc[scan8[i]];
        if (nnz) {
            if (nnz == 1 && block[i * 16])
                idct4_dc_add(dst + block_offset[i], block + i * 16, stride);
            else
                idct4_add(dst + block_offset[i], block + i * 16, stride);
        }
    }
}

static void idct_add16intra(uint8_t *dst, const int *block_offset, int16_t *block, int stride, const uint8_t nnzc[5 * 8])
{
    for (int i = 0; i < 16; i++) {
        if (nnzc[scan8[i]])
            idct4_add(dst + block_offset[i], block + i * 16, stride);
        else if (block[i * 16])
            idct4_dc_add(dst + block_offset[i], block + i * 16, stride);
    }
}

static void idct8_add4(uint8_t *dst, const int *block_offset, int16_t *block, int stride, const uint8_t nnzc[5 * 8])
{
    for (int i = 0; i < 16; i += 4) {
        const int nnz = nnzc[scan8[i]];
        if (nnz) {
            if (nnz == 1 && block[i * 16])
                idct8_dc_add(dst + block_offset[i], block + i * 16, stride);
            else
                idct8_add(dst + block_offset[i], block + i * 16, stride);
        }
    }
}

static void idct_add8(uint8_t **dest, const int *block_offset, int16_t *block, int stride, const uint8_t nnzc[15 * 8])
{
    for (int j = 1; j < 3; j++)
        for (int i = j * 16; i < j * 16 + 4; i++) {
            if (nnzc[scan8[i]])
                idct4_add(dest[j - 1] + block_offset[i], block + i * 16, stride);
            else if (block[i * 16])
                idct4_dc_add(dest[j - 1] + block_offset[i], block + i * 16, stride);
        }
}

void ff_h264_idct_init_wasm(H264DSPContext *c, const int chroma_format_idc)
{
    c->h264_idct_add = idct4_add;
    c->h264_idct8_add = idct8_add;
    c->h264_idct_dc_add = idct4_dc_add;
    c->h264_idct8_dc_add = idct8_dc_add;
    c->h264_idct_add16 = idct_add16;
    c->h264_idct8_add4 = idct8_add4;
    c->h264_idct_add16intra = idct_add16intra;
    if (chroma_format_idc <= 1)
        c->h264_idct_add8 = idct_add8;
}

/* ---- the check: every transform and loop against ffmpeg's C on the same blocks ---- */

enum { STRIDE = 32, MB_ROWS = 16 };

/* Coefficients: mostly small, as streams have them, some anywhere in int16 (the wrapping cases),
 * some zero; a DC that is sometimes the only one (the DC-only paths). */
static void check_coefficients(int16_t *c, int n, uint32_t *state, int round)
{
    const int wide = round % 4 == 3;
    for (int i = 0; i < n; i++) {
        const uint32_t r = check_rand(state);
        c[i] = r % 3 == 0 ? 0 : wide ? (int16_t)(r >> 8) : (int16_t)((int)((r >> 8) % 1025) - 512);
    }
    if (round % 5 == 1)
        for (int b = 0; b < n; b += 16)
            memset(c + b + 1, 0, 15 * sizeof(int16_t));
}

typedef struct idct_case {
    int16_t block[16 * 48] __attribute__((aligned(16)));
    uint8_t pixels[STRIDE * MB_ROWS * 3];
} idct_case;

/* Returns 0 when every function's output (pixels and the cleared block) equals the C's, else 1 +
 * the index of the first that differs (0 add, 1 add8x8, 2 dc_add, 3 dc_add8x8, 4 add16, 5 add8_4,
 * 6 add16intra, 7 add8 chroma) + 10 * the round. */
int ff_h264_idct_wasm_check(unsigned seed, int rounds)
{
    static idct_case start, ref, simd;
    H264DSPContext c_dsp, wasm_dsp;
    uint8_t nnzc[15 * 8];
    int block_offset[48];
    uint32_t state = seed;
    ff_h264dsp_init_c(&c_dsp, 8, 1);
    ff_h264dsp_init(&wasm_dsp, 8, 1);
    for (int i = 0; i < 16; i++) {
        const int d = scan8[i] - scan8[0];
        block_offset[i] = 4 * (d & 7) + 4 * STRIDE * (d >> 3);
        block_offset[16 + i] = block_offset[32 + i] = 4 * (d & 7) + 4 * STRIDE * (d >> 3);
    }
    for (int round = 0; round < rounds * 16; round++) {
        check_coefficients(start.block, 16 * 48, &state, round);
        check_fill(start.pixels, (int)sizeof(start.pixels), &state, round % 3 == 2);
        for (int i = 0; i < (int)sizeof(nnzc); i++) {
            const uint32_t r = check_rand(&state) % 4;
            nnzc[i] = r == 3 ? 16 : r;
        }
        for (int f = 0; f < 8; f++) {
            ref = start;
            simd = start;
            for (int side = 0; side < 2; side++) {
                H264DSPContext *d = side ? &wasm_dsp : &c_dsp;
                idct_case *k = side ? &simd : &ref;
                uint8_t *chroma[2] = {k->pixels + STRIDE * MB_ROWS, k->pixels + 2 * STRIDE * MB_ROWS};
                switch (f) {
                case 0: d->h264_idct_add(k->pixels + 4, k->block, STRIDE); break;
                case 1: d->h264_idct8_add(k->pixels + 8, k->block, STRIDE); break;
                case 2: d->h264_idct_dc_add(k->pixels + 4, k->block, STRIDE); break;
                case 3: d->h264_idct8_dc_add(k->pixels + 8, k->block, STRIDE); break;
                case 4: d->h264_idct_add16(k->pixels, block_offset, k->block, STRIDE, nnzc); break;
                case 5: d->h264_idct8_add4(k->pixels, block_offset, k->block, STRIDE, nnzc); break;
                case 6: d->h264_idct_add16intra(k->pixels, block_offset, k->block, STRIDE, nnzc); break;
                default: d->h264_idct_add8(chroma, block_offset, k->block, STRIDE, nnzc); break;
                }
            }
            if (memcmp(&ref, &simd, sizeof(ref)))
                return 1 + f + 10 * round;
        }
    }
    return 0;
}
