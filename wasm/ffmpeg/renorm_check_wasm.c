/*
 * The check of renorm-clz.patch: libavcodec's two arithmetic decoders, with the renormalising shift
 * counted by clz, against the same decoders with ffmpeg's shift tables (the functions below are
 * cabac_functions.h's and vp56.h's own, table included), bin by bin on random bytes, contexts and
 * probabilities. Tandem's own, copied into libavcodec/ by wasm/build.sh; for td_simd_check.
 */
#include "config.h"
#include <stdint.h>

#include "cabac_functions.h"
#include "vp56.h"
#include "simd_check_wasm.h"

/* get_cabac_inline as ffmpeg has it. */
static int table_get_cabac(CABACContext *c, uint8_t *state)
{
    int s = *state;
    int range_lps = ff_h264_lps_range[2 * (c->range & 0xC0) + s];
    int bit, lps_mask;
    c->range -= range_lps;
    lps_mask = ((c->range << (CABAC_BITS + 1)) - c->low) >> 31;
    c->low -= (c->range << (CABAC_BITS + 1)) & lps_mask;
    c->range += (range_lps - c->range) & lps_mask;
    s ^= lps_mask;
    *state = (ff_h264_mlps_state + 128)[s];
    bit = s & 1;
    lps_mask = ff_h264_norm_shift[c->range];
    c->range <<= lps_mask;
    c->low <<= lps_mask;
    if (!(c->low & CABAC_MASK))
        refill2(c);
    return bit;
}

/* vp56_rac_get_prob as ffmpeg has it. */
static int table_vp56_get_prob(VP56RangeCoder *c, uint8_t prob)
{
    int shift = ff_vp56_norm_shift[c->high], bits = c->bits;
    unsigned code_word = c->code_word << shift, low, low_shift;
    int bit;
    c->high <<= shift;
    bits += shift;
    if (bits >= 0 && c->buffer < c->end) {
        code_word |= bytestream_get_be16(&c->buffer) << bits;
        bits -= 16;
    }
    c->bits = bits;
    low = 1 + (((c->high - 1) * prob) >> 8);
    low_shift = low << 16;
    bit = code_word >= low_shift;
    c->high = bit ? c->high - low : low;
    c->code_word = bit ? code_word - low_shift : code_word;
    return bit;
}

enum { BYTES = 2048, BINS = 24000, CONTEXTS = 64 };

/* Called by td_simd_check (wasm/src/tandem_decode.c), which declares it too. */
int ff_renorm_wasm_check(unsigned seed, int rounds);

/* 0, or 1 + the round of the first difference (CABAC), or 100001 + it (VP56). */
int ff_renorm_wasm_check(unsigned seed, int rounds)
{
    uint8_t buf[BYTES + AV_INPUT_BUFFER_PADDING_SIZE] = {0};
    uint8_t sa[CONTEXTS], sb[CONTEXTS];
    CABACContext a, b;
    VP56RangeCoder c, d;
    uint32_t rng = seed;
    for (int round = 0; round < rounds; round++) {
        /* Random bytes, or runs of 64 zeros and 64 0xFFs in turn (long runs of one outcome). */
        const int runs = round & 1;
        for (int i = 0; i < BYTES; i++)
            buf[i] = runs ? ((i >> 6) & 1 ? 0xFF : 0x00) : (uint8_t)check_rand(&rng);
        for (int i = 0; i < CONTEXTS; i++)
            sa[i] = sb[i] = (uint8_t)(check_rand(&rng) % 126); /* 2 x state (0..62) + MPS */
        if (ff_init_cabac_decoder(&a, buf, BYTES) < 0 || ff_init_cabac_decoder(&b, buf, BYTES) < 0)
            return 1 + round;
        for (int n = 0; n < BINS; n++) {
            const int k = (int)(check_rand(&rng) % CONTEXTS);
            if (get_cabac(&a, &sa[k]) != table_get_cabac(&b, &sb[k]) || sa[k] != sb[k] || a.low != b.low ||
                a.range != b.range || a.bytestream != b.bytestream)
                return 1 + round;
        }
        if (ff_vp56_init_range_decoder(&c, buf, BYTES) < 0 || ff_vp56_init_range_decoder(&d, buf, BYTES) < 0)
            return 100001 + round;
        for (int n = 0; n < BINS; n++) {
            /* Probabilities 1..255, the extremes often: one bool there moves high the furthest. */
            const uint32_t r = check_rand(&rng);
            const uint8_t prob = (r & 7) == 0 ? 1 : (r & 7) == 1 ? 255 : (uint8_t)(1 + (r >> 8) % 255);
            if (vp56_rac_get_prob(&c, prob) != table_vp56_get_prob(&d, prob) || c.high != d.high ||
                c.code_word != d.code_word || c.bits != d.bits || c.buffer != d.buffer)
                return 100001 + round;
        }
    }
    return 0;
}
