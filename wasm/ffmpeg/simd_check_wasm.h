/*
 * The test data of the SIMD128 kernels' checks (ff_vp9_wasm_check, ff_vp9_itxfm_wasm_check,
 * ff_vp9_lpf_wasm_check, ff_h264_wasm_check, ff_h264_deblock_wasm_check, ff_h264_idct_wasm_check):
 * Tandem's own, copied into libavcodec/ with them by wasm/build.sh.
 */
#ifndef AVCODEC_SIMD_CHECK_WASM_H
#define AVCODEC_SIMD_CHECK_WASM_H

#include <stdint.h>

/* A counter through murmur3's finaliser: an LCG's low bytes have a lattice structure that never
 * produces some sums of neighbouring pixels (a rounding mutation went unseen with one). */
static inline uint32_t check_rand(uint32_t *state)
{
    uint32_t z = *state += 0x9E3779B9u;
    z = (z ^ (z >> 16)) * 0x85EBCA6Bu;
    z = (z ^ (z >> 13)) * 0xC2B2AE35u;
    return z ^ (z >> 16);
}

/* Random bytes, or (extremes) only 0s and 255s, which reach a filter's extreme sums. */
static inline void check_fill(uint8_t *p, int n, uint32_t *state, int extremes)
{
    for (int i = 0; i < n; i++) {
        const uint32_t r = check_rand(state);
        p[i] = extremes ? ((r & 1) ? 255 : 0) : (uint8_t)r;
    }
}

#endif /* AVCODEC_SIMD_CHECK_WASM_H */
