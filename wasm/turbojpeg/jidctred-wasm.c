/* Tandem: libjpeg-turbo's scaled inverse DCTs (jidctint.c: jpeg_idct_3x3, 5x5, 6x6 and 7x7) in
 * wasm SIMD128, for the reduced decodes (3/8, 5/8, 6/8 and 7/8 scale) the loader asks for.
 *
 * libjpeg-turbo's SIMD code covers the 2x2 and 4x4 reduced IDCTs (and 6x6 and 12x12 on MIPS
 * only), so on wasm these four are scalar C. Here every step of the C runs in 32-bit lanes with
 * the same constants (FIX() of the same numbers), the same order of operations, the same
 * fudge factors and the same truncating shifts; wasm's i32 arithmetic wraps as the C's 32-bit
 * JLONG does on wasm32, so each output sample is the one the C produces, for any input.
 *
 * The range limit is reproduced exactly too, for damaged files whose samples leave 0..255: the
 * C stores range_limit[(x >> 18) & 1023], and libjpeg-turbo's post-IDCT table (jdmaster.c,
 * prepare_range_limit_table) holds, for y = x & 1023: y + 128 for y < 128, 255 for 128..511,
 * 0 for 512..895 and y - 896 for 896..1023. That is clamp(((x + 512) & 1023) - 384, 0, 255).
 * The + 512 is folded into pass 2's fudge factor (512 << 18 added before the shift changes
 * (x >> 18) by exactly 512, modulo 2^14, which the mask absorbs); x >> 18 of a 32-bit value fits
 * 16 bits, so the mask and the - 384 work on 16-bit lanes, and the byte narrowing saturates.
 *
 * Pass 1 works on the columns, four in a vector (one vector is four columns of one row, at most
 * two vectors a row); the n x n intermediate is transposed in 4x4 tiles; pass 2 works on the
 * rows four at a time the same way. Each output row is written with exactly n bytes: two 4-byte
 * stores that overlap for n = 5..7, a 2-byte and a 1-byte store for n = 3. A block whose used
 * coefficients (the top-left n x n) are all zero but the DC is one value, computed as the C's
 * two passes compute it. */
#define JPEG_INTERNALS
#include "../../jinclude.h"
#include "../../jpeglib.h"
#include "../../jdct.h"
#include <stdint.h>
#include <wasm_simd128.h>

#define CONST_BITS 13
#define PASS1_BITS 2
/* jdct.h's FIX(x): x * 2^CONST_BITS, rounded, evaluated as the C evaluates it. */

#define SHIFT1 (CONST_BITS - PASS1_BITS)     /* pass 1's descale */
#define SHIFT2 (CONST_BITS + PASS1_BITS + 3) /* pass 2's descale */
#define FUDGE1 (1 << (SHIFT1 - 1))
/* Pass 2: the C's (ws[0] + (1 << (PASS1_BITS + 2))) << CONST_BITS, plus the range limit's 512. */
#define FUDGE2 ((1 << (PASS1_BITS + 2 + CONST_BITS)) + (512 << SHIFT2))

#define ADD(a, b)  wasm_i32x4_add((a), (b))
#define SUB(a, b)  wasm_i32x4_sub((a), (b))
#define SHL(a, n)  wasm_i32x4_shl((a), (n))
#define SHR(a, n)  wasm_i32x4_shr((a), (n))
#define MULC(a, c) wasm_i32x4_mul((a), wasm_i32x4_splat((int32_t)(c)))

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* The 1-D kernels: in[k] is input k along the transformed axis, out[k] output k, shifted right
 * by `shift`; `fudge` is added to the DC term after its << CONST_BITS, as the C does. */

ALWAYS_INLINE void idct3(const v128_t *in, v128_t *out, v128_t fudge, int shift) {
  v128_t tmp0 = ADD(SHL(in[0], CONST_BITS), fudge);
  v128_t tmp12 = MULC(in[2], FIX(0.707106781)); /* c2 */
  const v128_t tmp10 = ADD(tmp0, tmp12);
  const v128_t tmp2 = SUB(SUB(tmp0, tmp12), tmp12);
  tmp0 = MULC(in[1], FIX(1.224744871)); /* c1 */
  out[0] = SHR(ADD(tmp10, tmp0), shift);
  out[2] = SHR(SUB(tmp10, tmp0), shift);
  out[1] = SHR(tmp2, shift);
}

ALWAYS_INLINE void idct5(const v128_t *in, v128_t *out, v128_t fudge, int shift) {
  v128_t tmp12 = ADD(SHL(in[0], CONST_BITS), fudge);
  v128_t tmp0 = in[2], tmp1 = in[4];
  v128_t z1 = MULC(ADD(tmp0, tmp1), FIX(0.790569415)); /* (c2+c4)/2 */
  v128_t z2 = MULC(SUB(tmp0, tmp1), FIX(0.353553391)); /* (c2-c4)/2 */
  v128_t z3 = ADD(tmp12, z2);
  const v128_t tmp10 = ADD(z3, z1), tmp11 = SUB(z3, z1);
  tmp12 = SUB(tmp12, SHL(z2, 2));
  z2 = in[1];
  z3 = in[3];
  z1 = MULC(ADD(z2, z3), FIX(0.831253876));   /* c3 */
  tmp0 = ADD(z1, MULC(z2, FIX(0.513743148))); /* c1-c3 */
  tmp1 = SUB(z1, MULC(z3, FIX(2.176250899))); /* c1+c3 */
  out[0] = SHR(ADD(tmp10, tmp0), shift);
  out[4] = SHR(SUB(tmp10, tmp0), shift);
  out[1] = SHR(ADD(tmp11, tmp1), shift);
  out[3] = SHR(SUB(tmp11, tmp1), shift);
  out[2] = SHR(tmp12, shift);
}

/* The C's 6x6 differs between its passes: pass 1 descales tmp11 early and shifts the odd part's
 * middle term by PASS1_BITS (outputs 1 and 4 then need no shift); pass 2 by CONST_BITS. */
ALWAYS_INLINE void idct6(const v128_t *in, v128_t *out, v128_t fudge, int shift, int pass2) {
  v128_t tmp0 = ADD(SHL(in[0], CONST_BITS), fudge);
  v128_t tmp10 = MULC(in[4], FIX(0.707106781)); /* c4 */
  v128_t tmp1 = ADD(tmp0, tmp10);
  v128_t tmp11 = SUB(SUB(tmp0, tmp10), tmp10);
  if (!pass2) tmp11 = SHR(tmp11, SHIFT1);
  tmp0 = MULC(in[2], FIX(1.224744871)); /* c2 */
  tmp10 = ADD(tmp1, tmp0);
  const v128_t tmp12 = SUB(tmp1, tmp0);
  const v128_t z1 = in[1], z2 = in[3], z3 = in[5];
  tmp1 = MULC(ADD(z1, z3), FIX(0.366025404)); /* c5 */
  tmp0 = ADD(tmp1, SHL(ADD(z1, z2), CONST_BITS));
  const v128_t tmp2 = ADD(tmp1, SHL(SUB(z3, z2), CONST_BITS));
  tmp1 = SHL(SUB(SUB(z1, z2), z3), pass2 ? CONST_BITS : PASS1_BITS);
  out[0] = SHR(ADD(tmp10, tmp0), shift);
  out[5] = SHR(SUB(tmp10, tmp0), shift);
  out[1] = pass2 ? SHR(ADD(tmp11, tmp1), shift) : ADD(tmp11, tmp1);
  out[4] = pass2 ? SHR(SUB(tmp11, tmp1), shift) : SUB(tmp11, tmp1);
  out[2] = SHR(ADD(tmp12, tmp2), shift);
  out[3] = SHR(SUB(tmp12, tmp2), shift);
}

ALWAYS_INLINE void idct7(const v128_t *in, v128_t *out, v128_t fudge, int shift) {
  /* Even part. */
  v128_t tmp13 = ADD(SHL(in[0], CONST_BITS), fudge);
  v128_t z1 = in[2], z2 = in[4], z3 = in[6];
  v128_t tmp10 = MULC(SUB(z2, z3), FIX(0.881747734));                                  /* c4 */
  v128_t tmp12 = MULC(SUB(z1, z2), FIX(0.314692123));                                  /* c6 */
  const v128_t tmp11 = SUB(ADD(ADD(tmp10, tmp12), tmp13), MULC(z2, FIX(1.841218003))); /* c2+c4-c6 */
  v128_t tmp0 = ADD(z1, z3);
  z2 = SUB(z2, tmp0);
  tmp0 = ADD(MULC(tmp0, FIX(1.274162392)), tmp13);           /* c2 */
  tmp10 = ADD(tmp10, SUB(tmp0, MULC(z3, FIX(0.077722536)))); /* c2-c4-c6 */
  tmp12 = ADD(tmp12, SUB(tmp0, MULC(z1, FIX(2.470602249)))); /* c2+c4+c6 */
  tmp13 = ADD(tmp13, MULC(z2, FIX(1.414213562)));            /* c0 */

  /* Odd part. */
  z1 = in[1];
  z2 = in[3];
  z3 = in[5];
  v128_t tmp1 = MULC(ADD(z1, z2), FIX(0.935414347)); /* (c3+c1-c5)/2 */
  v128_t tmp2 = MULC(SUB(z1, z2), FIX(0.170262339)); /* (c3+c5-c1)/2 */
  tmp0 = SUB(tmp1, tmp2);
  tmp1 = ADD(tmp1, tmp2);
  tmp2 = MULC(ADD(z2, z3), -FIX(1.378756276)); /* -c1 */
  tmp1 = ADD(tmp1, tmp2);
  z2 = MULC(ADD(z1, z3), FIX(0.613604268)); /* c5 */
  tmp0 = ADD(tmp0, z2);
  tmp2 = ADD(tmp2, ADD(z2, MULC(z3, FIX(1.870828693)))); /* c3+c1-c5 */

  out[0] = SHR(ADD(tmp10, tmp0), shift);
  out[6] = SHR(SUB(tmp10, tmp0), shift);
  out[1] = SHR(ADD(tmp11, tmp1), shift);
  out[5] = SHR(SUB(tmp11, tmp1), shift);
  out[2] = SHR(ADD(tmp12, tmp2), shift);
  out[4] = SHR(SUB(tmp12, tmp2), shift);
  out[3] = SHR(tmp13, shift);
}

ALWAYS_INLINE void kernel(int n, int pass2, const v128_t *in, v128_t *out) {
  const v128_t fudge = wasm_i32x4_splat(pass2 ? FUDGE2 : FUDGE1);
  const int shift = pass2 ? SHIFT2 : SHIFT1;
  switch (n) {
    case 3: idct3(in, out, fudge, shift); break;
    case 5: idct5(in, out, fudge, shift); break;
    case 6: idct6(in, out, fudge, shift, pass2); break;
    default: idct7(in, out, fudge, shift); break;
  }
}

/* Transposes the 4x4 tile of rows a..d into columns out[0..3]. */
ALWAYS_INLINE void transpose4(v128_t a, v128_t b, v128_t c, v128_t d, v128_t *out) {
  const v128_t ab_lo = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), ab_hi = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
  const v128_t cd_lo = wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), cd_hi = wasm_i32x4_shuffle(c, d, 2, 6, 3, 7);
  out[0] = wasm_i64x2_shuffle(ab_lo, cd_lo, 0, 2);
  out[1] = wasm_i64x2_shuffle(ab_lo, cd_lo, 1, 3);
  out[2] = wasm_i64x2_shuffle(ab_hi, cd_hi, 0, 2);
  out[3] = wasm_i64x2_shuffle(ab_hi, cd_hi, 1, 3);
}

/* Pass 2's results to range-limited 16-bit samples: x (already + 512) & 1023, - 384. */
ALWAYS_INLINE v128_t limit16(v128_t a, v128_t b) {
  const v128_t v = wasm_v128_and(wasm_i16x8_narrow_i32x4(a, b), wasm_i16x8_splat(1023));
  return wasm_i16x8_sub(v, wasm_i16x8_splat(384));
}

/* Byte (row r, column c) of a packed 4-row group: L = columns 0..3 at 4c + r, R = columns 4..7
 * at 16 + 4(c - 4) + r. For n = 5..7, ROWPAIR(n, r) gathers rows r and r + 1 as four 32-bit
 * lanes: row r's columns 0..3, its columns n-4..n-1, then the same for row r + 1. */
#define IX(r, c) ((c) < 4 ? 4 * (c) + (r) : 16 + 4 * ((c)-4) + (r))
#define ROWPAIR(L, R, n, r)                                                                                                                \
  wasm_i8x16_shuffle(L, R, IX(r, 0), IX(r, 1), IX(r, 2), IX(r, 3), IX(r, n - 4), IX(r, n - 3), IX(r, n - 2), IX(r, n - 1), IX(r + 1, 0),   \
                     IX(r + 1, 1), IX(r + 1, 2), IX(r + 1, 3), IX(r + 1, n - 4), IX(r + 1, n - 3), IX(r + 1, n - 2), IX(r + 1, n - 1))
#define STORE_ROW(x, half, row)                                                                                                            \
  do {                                                                                                                                     \
    wasm_v128_store32_lane(output_buf[row] + output_col, x, 2 * (half));                                                                   \
    wasm_v128_store32_lane(output_buf[row] + output_col + n - 4, x, 2 * (half) + 1);                                                       \
  } while (0)

/* Stores rows first_row .. first_row + rows - 1 (rows <= 4) of an n x n block (n = 5..7) from
 * pass 2's out[0..n-1] (lanes: rows first_row .. first_row + 3). */
ALWAYS_INLINE void store_group(int n, const v128_t *out, int rows, JSAMPARRAY output_buf, JDIMENSION output_col, int first_row) {
  const v128_t c01 = limit16(out[0], out[1]), c23 = limit16(out[2], out[3]);
  const v128_t c45 = limit16(out[4], n > 5 ? out[5] : out[4]);
  const v128_t c67 = n > 6 ? limit16(out[6], out[6]) : c45;
  const v128_t L = wasm_u8x16_narrow_i16x8(c01, c23), R = wasm_u8x16_narrow_i16x8(c45, c67);
  v128_t x01, x23;
  switch (n) {
    case 5:
      x01 = ROWPAIR(L, R, 5, 0);
      x23 = ROWPAIR(L, R, 5, 2);
      break;
    case 6:
      x01 = ROWPAIR(L, R, 6, 0);
      x23 = ROWPAIR(L, R, 6, 2);
      break;
    default:
      x01 = ROWPAIR(L, R, 7, 0);
      x23 = ROWPAIR(L, R, 7, 2);
      break;
  }
  STORE_ROW(x01, 0, first_row);
  if (rows > 1) STORE_ROW(x01, 1, first_row + 1);
  if (rows > 2) STORE_ROW(x23, 0, first_row + 2);
  if (rows > 3) STORE_ROW(x23, 1, first_row + 3);
}

/* The C's two passes for a block whose only used nonzero coefficient is the DC, in 32 bits as
 * the C computes them (shifts of the unsigned value, as its LEFT_SHIFT), then its range limit. */
ALWAYS_INLINE int dc_only_sample(JCOEFPTR coef_block, const ISLOW_MULT_TYPE *quant) {
  const int32_t dc = (int32_t)coef_block[0] * (int32_t)quant[0];
  const int32_t ws = (int32_t)(((uint32_t)dc << CONST_BITS) + FUDGE1) >> SHIFT1;
  const int32_t x = (int32_t)(((uint32_t)ws << CONST_BITS) + (1u << (PASS1_BITS + 2 + CONST_BITS))) >> SHIFT2;
  const int v = ((x + 512) & 1023) - 384;
  return v < 0 ? 0 : v > MAXJSAMPLE ? MAXJSAMPLE : v;
}

ALWAYS_INLINE void idct_nxn(int n, const ISLOW_MULT_TYPE *quant, JCOEFPTR coef_block, JSAMPARRAY output_buf, JDIMENSION output_col) {
  v128_t coef[7], q[7];
  for (int r = 0; r < n; r++) {
    coef[r] = wasm_v128_load(coef_block + r * DCTSIZE);
    q[r] = wasm_v128_load(quant + r * DCTSIZE);
  }

  /* Only the top-left n x n coefficients are used. */
  const v128_t used = wasm_i16x8_make(-1, -1, -1, n > 3 ? -1 : 0, n > 4 ? -1 : 0, n > 5 ? -1 : 0, n > 6 ? -1 : 0, 0);
  v128_t ac = coef[1];
  for (int r = 2; r < n; r++) ac = wasm_v128_or(ac, coef[r]);
  ac = wasm_v128_or(wasm_v128_and(ac, used), wasm_v128_and(coef[0], wasm_i16x8_replace_lane(used, 0, 0)));
  if (!wasm_v128_any_true(ac)) {
    const v128_t v = wasm_i8x16_splat((int8_t)dc_only_sample(coef_block, quant));
    for (int r = 0; r < n; r++) {
      if (n == 3) {
        wasm_v128_store16_lane(output_buf[r] + output_col, v, 0);
        wasm_v128_store8_lane(output_buf[r] + output_col + 2, v, 0);
      } else {
        wasm_v128_store32_lane(output_buf[r] + output_col, v, 0);
        wasm_v128_store32_lane(output_buf[r] + output_col + n - 4, v, 0);
      }
    }
    return;
  }

  /* Pass 1: columns. in[k] = coefficient row k dequantized (16 x 16 -> 32 bits, the C's int
   * product); lo: columns 0..3, hi: columns 4..7 (n > 4 only). */
  v128_t lo[7], hi[7], wlo[8], whi[8];
  for (int k = 0; k < n; k++) lo[k] = wasm_i32x4_extmul_low_i16x8(coef[k], q[k]);
  kernel(n, 0, lo, wlo);
  if (n > 4) {
    for (int k = 0; k < n; k++) hi[k] = wasm_i32x4_extmul_high_i16x8(coef[k], q[k]);
    kernel(n, 0, hi, whi);
  }
  for (int r = n; r < 8; r++) wlo[r] = whi[r] = wasm_i32x4_splat(0);

  /* wlo[r] holds columns 0..3 of workspace row r, whi[r] columns 4..7. Transposed, rows 0..3 of
   * column c land in top[c] and rows 4..7 in bottom[c]. */
  v128_t top[8], bottom[8], out[7];
  transpose4(wlo[0], wlo[1], wlo[2], wlo[3], top);
  if (n == 3) {
    /* Pass 2 for rows 0..2; then columns 0..2 to bytes: byte 4c + r of L is (row r, column c). */
    kernel(3, 1, top, out);
    const v128_t L = wasm_u8x16_narrow_i16x8(limit16(out[0], out[1]), limit16(out[2], out[2]));
    /* 16-bit lanes 0..2: columns 0..1 of rows 0..2; bytes 8..10: column 2 of rows 0..2. */
    const v128_t x = wasm_i8x16_shuffle(L, L, 0, 4, 1, 5, 2, 6, 3, 7, 8, 9, 10, 11, 0, 0, 0, 0);
    wasm_v128_store16_lane(output_buf[0] + output_col, x, 0);
    wasm_v128_store16_lane(output_buf[1] + output_col, x, 1);
    wasm_v128_store16_lane(output_buf[2] + output_col, x, 2);
    wasm_v128_store8_lane(output_buf[0] + output_col + 2, x, 8);
    wasm_v128_store8_lane(output_buf[1] + output_col + 2, x, 9);
    wasm_v128_store8_lane(output_buf[2] + output_col + 2, x, 10);
    return;
  }
  transpose4(whi[0], whi[1], whi[2], whi[3], top + 4);
  transpose4(wlo[4], wlo[5], wlo[6], wlo[7], bottom);
  transpose4(whi[4], whi[5], whi[6], whi[7], bottom + 4);

  /* Pass 2: rows, four at a time, then range-limited to bytes and stored. */
  kernel(n, 1, top, out);
  store_group(n, out, 4, output_buf, output_col, 0);
  kernel(n, 1, bottom, out);
  store_group(n, out, n - 4, output_buf, output_col, 4);
}

GLOBAL(void)
jsimd_idct_3x3_wasm(j_decompress_ptr cinfo, jpeg_component_info *compptr, JCOEFPTR coef_block, JSAMPARRAY output_buf,
                    JDIMENSION output_col) {
  idct_nxn(3, (const ISLOW_MULT_TYPE *)compptr->dct_table, coef_block, output_buf, output_col);
}

GLOBAL(void)
jsimd_idct_5x5_wasm(j_decompress_ptr cinfo, jpeg_component_info *compptr, JCOEFPTR coef_block, JSAMPARRAY output_buf,
                    JDIMENSION output_col) {
  idct_nxn(5, (const ISLOW_MULT_TYPE *)compptr->dct_table, coef_block, output_buf, output_col);
}

GLOBAL(void)
jsimd_idct_6x6_wasm(j_decompress_ptr cinfo, jpeg_component_info *compptr, JCOEFPTR coef_block, JSAMPARRAY output_buf,
                    JDIMENSION output_col) {
  idct_nxn(6, (const ISLOW_MULT_TYPE *)compptr->dct_table, coef_block, output_buf, output_col);
}

GLOBAL(void)
jsimd_idct_7x7_wasm(j_decompress_ptr cinfo, jpeg_component_info *compptr, JCOEFPTR coef_block, JSAMPARRAY output_buf,
                    JDIMENSION output_col) {
  idct_nxn(7, (const ISLOW_MULT_TYPE *)compptr->dct_table, coef_block, output_buf, output_col);
}
