/* Tandem: libjpeg-turbo's YCbCr -> RGB colour conversion (jdcolor.c, ycc_rgb_convert, 3 bytes per
 * pixel in R, G, B order) in wasm SIMD128, sample for sample the C's result.
 *
 * The C adds table entries to Y: R = Y + (91881 Cr' + 2^15) >> 16, B = Y + (116130 Cb' + 2^15)
 * >> 16, G = Y + (-22554 Cb' - 46802 Cr' + 2^15) >> 16, with Cb' = Cb - 128, Cr' = Cr - 128, then
 * clamps to 0..255. Here each constant is split into a multiple of 2^16 (exact, added outside
 * the shift) and a remainder that fits 16 bits, so the products come from 16 x 16 -> 32-bit
 * widening multiplies, 8 pixels per pair; the sums stay within 16 bits and saturate to bytes. */
#define JPEG_INTERNALS
#include "../../jinclude.h"
#include "../../jpeglib.h"
#include <wasm_simd128.h>

/* 91881 = 65536 + 26345; 116130 = 2 * 65536 - 14942; -46802 = -65536 + 18734. */
#define R_CR 26345
#define B_CB (-14942)
#define G_CB (-22554)
#define G_CR 18734

static inline v128_t round_shift16(v128_t lo, v128_t hi) {
  const v128_t half = wasm_i32x4_splat(1 << 15);
  return wasm_i16x8_narrow_i32x4(wasm_i32x4_shr(wasm_i32x4_add(lo, half), 16), wasm_i32x4_shr(wasm_i32x4_add(hi, half), 16));
}

/* R, G, B of 8 pixels as 16-bit lanes, from Y, Cb', Cr' as 16-bit lanes. */
static inline void convert8(v128_t y, v128_t cb, v128_t cr, v128_t *r, v128_t *g, v128_t *b) {
  const v128_t r_cr = wasm_i16x8_splat(R_CR), b_cb = wasm_i16x8_splat(B_CB);
  const v128_t g_cb = wasm_i16x8_splat(G_CB), g_cr = wasm_i16x8_splat(G_CR);
  *r = wasm_i16x8_add(wasm_i16x8_add(y, cr), round_shift16(wasm_i32x4_extmul_low_i16x8(cr, r_cr), wasm_i32x4_extmul_high_i16x8(cr, r_cr)));
  *b = wasm_i16x8_add(wasm_i16x8_add(y, wasm_i16x8_add(cb, cb)),
                      round_shift16(wasm_i32x4_extmul_low_i16x8(cb, b_cb), wasm_i32x4_extmul_high_i16x8(cb, b_cb)));
  const v128_t g_lo = wasm_i32x4_add(wasm_i32x4_extmul_low_i16x8(cb, g_cb), wasm_i32x4_extmul_low_i16x8(cr, g_cr));
  const v128_t g_hi = wasm_i32x4_add(wasm_i32x4_extmul_high_i16x8(cb, g_cb), wasm_i32x4_extmul_high_i16x8(cr, g_cr));
  *g = wasm_i16x8_add(wasm_i16x8_sub(y, cr), round_shift16(g_lo, g_hi));
}

/* 16 pixels of planar R, G, B bytes to 48 bytes of packed RGB. */
static inline void store_rgb(uint8_t *out, v128_t r, v128_t g, v128_t b) {
  const v128_t rg0 = wasm_i8x16_shuffle(r, g, 0, 16, 0, 1, 17, 0, 2, 18, 0, 3, 19, 0, 4, 20, 0, 5);
  const v128_t rg1 = wasm_i8x16_shuffle(r, g, 21, 0, 6, 22, 0, 7, 23, 0, 8, 24, 0, 9, 25, 0, 10, 26);
  const v128_t rg2 = wasm_i8x16_shuffle(r, g, 0, 11, 27, 0, 12, 28, 0, 13, 29, 0, 14, 30, 0, 15, 31, 0);
  wasm_v128_store(out, wasm_i8x16_shuffle(rg0, b, 0, 1, 16, 3, 4, 17, 6, 7, 18, 9, 10, 19, 12, 13, 20, 15));
  wasm_v128_store(out + 16, wasm_i8x16_shuffle(rg1, b, 0, 21, 2, 3, 22, 5, 6, 23, 8, 9, 24, 11, 12, 25, 14, 15));
  wasm_v128_store(out + 32, wasm_i8x16_shuffle(rg2, b, 26, 1, 2, 27, 4, 5, 28, 7, 8, 29, 10, 11, 30, 13, 14, 31));
}

static inline JSAMPLE clamp(int v) { return (JSAMPLE)(v < 0 ? 0 : v > MAXJSAMPLE ? MAXJSAMPLE : v); }

GLOBAL(void)
jsimd_ycc_rgb_convert_wasm(JDIMENSION out_width, JSAMPIMAGE input_buf, JDIMENSION input_row, JSAMPARRAY output_buf, int num_rows) {
  const v128_t center = wasm_i16x8_splat(CENTERJSAMPLE);
  while (--num_rows >= 0) {
    const JSAMPLE *y_row = input_buf[0][input_row], *cb_row = input_buf[1][input_row], *cr_row = input_buf[2][input_row];
    input_row++;
    JSAMPLE *out = *output_buf++;
    JDIMENSION col = 0;
    for (; col + 16 <= out_width; col += 16, out += 48) {
      const v128_t y = wasm_v128_load(y_row + col), cb = wasm_v128_load(cb_row + col), cr = wasm_v128_load(cr_row + col);
      v128_t r_lo, g_lo, b_lo, r_hi, g_hi, b_hi;
      convert8(wasm_u16x8_extend_low_u8x16(y), wasm_i16x8_sub(wasm_u16x8_extend_low_u8x16(cb), center),
               wasm_i16x8_sub(wasm_u16x8_extend_low_u8x16(cr), center), &r_lo, &g_lo, &b_lo);
      convert8(wasm_u16x8_extend_high_u8x16(y), wasm_i16x8_sub(wasm_u16x8_extend_high_u8x16(cb), center),
               wasm_i16x8_sub(wasm_u16x8_extend_high_u8x16(cr), center), &r_hi, &g_hi, &b_hi);
      store_rgb(out, wasm_u8x16_narrow_i16x8(r_lo, r_hi), wasm_u8x16_narrow_i16x8(g_lo, g_hi), wasm_u8x16_narrow_i16x8(b_lo, b_hi));
    }
    for (; col < out_width; col++, out += 3) {
      const int y = y_row[col], cb = cb_row[col] - CENTERJSAMPLE, cr = cr_row[col] - CENTERJSAMPLE;
      out[0] = clamp(y + ((91881 * cr + (1 << 15)) >> 16));
      out[1] = clamp(y + ((-22554 * cb - 46802 * cr + (1 << 15)) >> 16));
      out[2] = clamp(y + ((116130 * cb + (1 << 15)) >> 16));
    }
  }
}
