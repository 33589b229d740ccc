/* Tandem: libjpeg-turbo's accurate integer IDCT (jidctint.c, jpeg_idct_islow) in wasm SIMD128.
 *
 * The Arm Neon version compiled through SIMDe runs no faster than the scalar C on wasm (its
 * 16-bit fixed-point multiplies and lane-indexed multiply-adds have no wasm counterpart and are
 * split into scalars), so this one is written for wasm's own instructions: every step of the C
 * in 32-bit lanes, with the same constants, the same order of operations and the same rounding,
 * so each output sample is the one jpeg_idct_islow produces. The one difference is for corrupt
 * data whose result leaves the sample range: it saturates to 0..255 (as libjpeg-turbo's x86
 * and Arm versions do) where the C indexes its range-limit table modulo 1024.
 *
 * Pass 1 works on the columns, four at a time in a vector (one vector is four samples of one
 * row); the 8x8 intermediate is transposed in 4x4 tiles; pass 2 works on the rows the same way;
 * the result is narrowed to bytes and transposed back while it is packed. */
#define JPEG_INTERNALS
#include "../../jinclude.h"
#include "../../jpeglib.h"
#include "../../jdct.h"
#include <wasm_simd128.h>

#define CONST_BITS 13
#define PASS1_BITS 2

/* The C's constants: FIX(x) = x * 2^13, rounded. */
#define F_0_298631336 2446
#define F_0_390180644 3196
#define F_0_541196100 4433
#define F_0_765366865 6270
#define F_0_899976223 7373
#define F_1_175875602 9633
#define F_1_501321110 12299
#define F_1_847759065 15137
#define F_1_961570560 16069
#define F_2_053119869 16819
#define F_2_562915447 20995
#define F_3_072711026 25172

#define MUL(v, c)     wasm_i32x4_mul((v), wasm_i32x4_splat(c))
#define DESCALE(v, n) wasm_i32x4_shr(wasm_i32x4_add((v), wasm_i32x4_splat(1 << ((n)-1))), (n))

/* One 8-point inverse DCT of the C's loop body over four lanes at once: in[k] holds input k
 * (k = 0..7 along the transformed axis) and out[k] gets output k, before the final descale. */
static inline void idct8(const v128_t in[8], v128_t out[8]) {
  /* Even part. */
  v128_t z2 = in[2], z3 = in[6];
  v128_t z1 = MUL(wasm_i32x4_add(z2, z3), F_0_541196100);
  v128_t tmp2 = wasm_i32x4_add(z1, MUL(z3, -F_1_847759065));
  v128_t tmp3 = wasm_i32x4_add(z1, MUL(z2, F_0_765366865));
  v128_t tmp0 = wasm_i32x4_shl(wasm_i32x4_add(in[0], in[4]), CONST_BITS);
  v128_t tmp1 = wasm_i32x4_shl(wasm_i32x4_sub(in[0], in[4]), CONST_BITS);
  const v128_t tmp10 = wasm_i32x4_add(tmp0, tmp3), tmp13 = wasm_i32x4_sub(tmp0, tmp3);
  const v128_t tmp11 = wasm_i32x4_add(tmp1, tmp2), tmp12 = wasm_i32x4_sub(tmp1, tmp2);

  /* Odd part. */
  tmp0 = in[7];
  tmp1 = in[5];
  tmp2 = in[3];
  tmp3 = in[1];
  z1 = wasm_i32x4_add(tmp0, tmp3);
  z2 = wasm_i32x4_add(tmp1, tmp2);
  z3 = wasm_i32x4_add(tmp0, tmp2);
  v128_t z4 = wasm_i32x4_add(tmp1, tmp3);
  const v128_t z5 = MUL(wasm_i32x4_add(z3, z4), F_1_175875602);
  tmp0 = MUL(tmp0, F_0_298631336);
  tmp1 = MUL(tmp1, F_2_053119869);
  tmp2 = MUL(tmp2, F_3_072711026);
  tmp3 = MUL(tmp3, F_1_501321110);
  z1 = MUL(z1, -F_0_899976223);
  z2 = MUL(z2, -F_2_562915447);
  z3 = wasm_i32x4_add(MUL(z3, -F_1_961570560), z5);
  z4 = wasm_i32x4_add(MUL(z4, -F_0_390180644), z5);
  tmp0 = wasm_i32x4_add(tmp0, wasm_i32x4_add(z1, z3));
  tmp1 = wasm_i32x4_add(tmp1, wasm_i32x4_add(z2, z4));
  tmp2 = wasm_i32x4_add(tmp2, wasm_i32x4_add(z2, z3));
  tmp3 = wasm_i32x4_add(tmp3, wasm_i32x4_add(z1, z4));

  out[0] = wasm_i32x4_add(tmp10, tmp3);
  out[7] = wasm_i32x4_sub(tmp10, tmp3);
  out[1] = wasm_i32x4_add(tmp11, tmp2);
  out[6] = wasm_i32x4_sub(tmp11, tmp2);
  out[2] = wasm_i32x4_add(tmp12, tmp1);
  out[5] = wasm_i32x4_sub(tmp12, tmp1);
  out[3] = wasm_i32x4_add(tmp13, tmp0);
  out[4] = wasm_i32x4_sub(tmp13, tmp0);
}

/* Transposes the 4x4 tile a..d (rows) in place. */
static inline void transpose4(v128_t *a, v128_t *b, v128_t *c, v128_t *d) {
  const v128_t ab_lo = wasm_i32x4_shuffle(*a, *b, 0, 4, 1, 5), ab_hi = wasm_i32x4_shuffle(*a, *b, 2, 6, 3, 7);
  const v128_t cd_lo = wasm_i32x4_shuffle(*c, *d, 0, 4, 1, 5), cd_hi = wasm_i32x4_shuffle(*c, *d, 2, 6, 3, 7);
  *a = wasm_i64x2_shuffle(ab_lo, cd_lo, 0, 2);
  *b = wasm_i64x2_shuffle(ab_lo, cd_lo, 1, 3);
  *c = wasm_i64x2_shuffle(ab_hi, cd_hi, 0, 2);
  *d = wasm_i64x2_shuffle(ab_hi, cd_hi, 1, 3);
}

/* Four output rows (lanes) by eight columns (vectors) to bytes, +128 and saturated, stored as
 * rows: the byte narrowing leaves each 16 bytes column-major, one shuffle makes them rows. */
static inline void store_rows(const v128_t col[8], JSAMPARRAY output_buf, JDIMENSION output_col, int first_row) {
  const v128_t center = wasm_i16x8_splat(CENTERJSAMPLE);
  const v128_t c01 = wasm_i16x8_add_sat(wasm_i16x8_narrow_i32x4(col[0], col[1]), center);
  const v128_t c23 = wasm_i16x8_add_sat(wasm_i16x8_narrow_i32x4(col[2], col[3]), center);
  const v128_t c45 = wasm_i16x8_add_sat(wasm_i16x8_narrow_i32x4(col[4], col[5]), center);
  const v128_t c67 = wasm_i16x8_add_sat(wasm_i16x8_narrow_i32x4(col[6], col[7]), center);
  /* left: columns 0..3 of rows 0..3, column-major; right: columns 4..7. */
  const v128_t left = wasm_u8x16_narrow_i16x8(c01, c23), right = wasm_u8x16_narrow_i16x8(c45, c67);
  /* Byte (row r, column c) of `left` sits at 4c + r. Rows 0,1 and 2,3 of all eight columns: */
  const v128_t r01 = wasm_i8x16_shuffle(left, right, 0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
  const v128_t r23 = wasm_i8x16_shuffle(left, right, 2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
  wasm_v128_store64_lane(output_buf[first_row + 0] + output_col, r01, 0);
  wasm_v128_store64_lane(output_buf[first_row + 1] + output_col, r01, 1);
  wasm_v128_store64_lane(output_buf[first_row + 2] + output_col, r23, 0);
  wasm_v128_store64_lane(output_buf[first_row + 3] + output_col, r23, 1);
}

GLOBAL(void)
jsimd_idct_islow_wasm(void *dct_table, JCOEFPTR coef_block, JSAMPARRAY output_buf, JDIMENSION output_col) {
  v128_t coef[DCTSIZE], quant[DCTSIZE];
  for (int r = 0; r < DCTSIZE; r++) {
    coef[r] = wasm_v128_load(coef_block + r * DCTSIZE);
    quant[r] = wasm_v128_load((const ISLOW_MULT_TYPE *)dct_table + r * DCTSIZE);
  }

  /* A block with no AC coefficient (common in smooth areas) is one value: the C's two passes
   * reduce to (DC * q << 2 + 16) >> 5, +128, saturated. */
  v128_t any = wasm_v128_and(coef[0], wasm_i16x8_make(0, -1, -1, -1, -1, -1, -1, -1));
  for (int r = 1; r < DCTSIZE; r++) any = wasm_v128_or(any, coef[r]);
  if (!wasm_v128_any_true(any)) {
    const int dc = ((int)coef_block[0] * ((const ISLOW_MULT_TYPE *)dct_table)[0]) << PASS1_BITS;
    int v = ((dc + (1 << (PASS1_BITS + 2))) >> (PASS1_BITS + 3)) + CENTERJSAMPLE;
    v = v < 0 ? 0 : v > MAXJSAMPLE ? MAXJSAMPLE : v;
    const v128_t row = wasm_i8x16_splat((int8_t)v);
    for (int r = 0; r < DCTSIZE; r++) wasm_v128_store64_lane(output_buf[r] + output_col, row, 0);
    return;
  }

  /* Pass 1: columns. in[k] = row k dequantized (16 x 16 -> 32 bits, as the C's int product). */
  v128_t lo[8], hi[8], ws_lo[8], ws_hi[8];
  for (int k = 0; k < DCTSIZE; k++) {
    lo[k] = wasm_i32x4_extmul_low_i16x8(coef[k], quant[k]);
    hi[k] = wasm_i32x4_extmul_high_i16x8(coef[k], quant[k]);
  }
  idct8(lo, ws_lo);
  idct8(hi, ws_hi);
  for (int k = 0; k < DCTSIZE; k++) {
    ws_lo[k] = DESCALE(ws_lo[k], CONST_BITS - PASS1_BITS);
    ws_hi[k] = DESCALE(ws_hi[k], CONST_BITS - PASS1_BITS);
  }

  /* ws_lo[r] holds columns 0..3 of row r, ws_hi[r] columns 4..7. Transposed, rows 0..3 of
   * column c land in top[c] and rows 4..7 in bottom[c]. */
  v128_t top[8], bottom[8];
  for (int g = 0; g < 2; g++) {
    v128_t *dst = g ? bottom : top;
    const int r = 4 * g;
    v128_t a = ws_lo[r], b = ws_lo[r + 1], c = ws_lo[r + 2], d = ws_lo[r + 3];
    transpose4(&a, &b, &c, &d);
    dst[0] = a;
    dst[1] = b;
    dst[2] = c;
    dst[3] = d;
    a = ws_hi[r];
    b = ws_hi[r + 1];
    c = ws_hi[r + 2];
    d = ws_hi[r + 3];
    transpose4(&a, &b, &c, &d);
    dst[4] = a;
    dst[5] = b;
    dst[6] = c;
    dst[7] = d;
  }

  /* Pass 2: rows, four at a time; then descale by 2^18 and store. */
  v128_t out[8];
  idct8(top, out);
  for (int k = 0; k < DCTSIZE; k++) out[k] = DESCALE(out[k], CONST_BITS + PASS1_BITS + 3);
  store_rows(out, output_buf, output_col, 0);
  idct8(bottom, out);
  for (int k = 0; k < DCTSIZE; k++) out[k] = DESCALE(out[k], CONST_BITS + PASS1_BITS + 3);
  store_rows(out, output_buf, output_col, 4);
}
