// Tandem's wasm SIMD128 code (wasm/ffmpeg/vp9mc_wasm.c, vp9itxfm_wasm.c, vp9lpf_wasm.c, h264mc_wasm.c,
// h264deblock_wasm.c, h264idct_wasm.c) replaces libavcodec's C inside both decode modules. Decoders
// must stay bit-exact, so each module runs every replaced function beside ffmpeg's own C on the same
// blocks and reports the first difference: every VP9 filter, size, put/avg and sub-pel position, and
// every H.264 quarter-pel position at 16, 8 and 4 and chroma offset, on random and all-0-or-255
// blocks; every H.264 edge filter on smooth blocks with a step, random alpha, beta and tc0, some near
// 0 and 255; every VP9 loop filter (4-, 8- and 16-wide, both directions, the 16-pixel and mixed pairs)
// on random areas and on smooth ones that pass its flatness tests, with limits as the decoder derives
// them or anywhere in a byte; every H.264 inverse transform (4x4, 8x8, their DC-only forms) and
// macroblock loop, and every VP9 one (DCT and ADST pairings at 4, 8 and 16, the 32x32 DCT, DC-only
// blocks), on random coefficients, some across all of int16 where the C's 16-bit block wraps. Tandem's
// yuv420p/yuv422p to RGB24 converter (wasm/src/yuv2rgb.c) replaces libswscale's for unscaled frames:
// it is held to sws_scale on every Y, U and V under every matrix and range, and on windows whose widths
// leave every tail (an odd width's last column, which swscale leaves unwritten, to sws_scale one column
// wider). The arithmetic decoders' renormalising shift, counted by clz (wasm/ffmpeg/renorm-clz.patch),
// is held bin by bin to ffmpeg's table versions of H.264's CABAC and VP9's range coder on random and
// run-filled bytes. Each check was seen failing with an off-by-one rounding, shift or threshold (or a saturating
// add for a wrapping one; for the converter, a chroma coefficient one off, a misplaced byte and the
// last odd column skipped; for the VP9 transforms also a transposition's lanes swapped and a 16-bit
// truncation left out, for its loop filters a transposition's lanes swapped and a row not stored) put in
// on purpose.
import { describe, expect, it } from 'vitest';
import { loadDecodeModule, loadSingleModule } from '../../src/decode/module.ts';

const warn = (): void => {};

// A nonzero code names the case (td_simd_check in wasm/src/tandem_decode.c): VP9 motion
// compensation as it comes, H.264's plus 1 000 000, H.264 deblocking plus 2 000 000, H.264's inverse
// transforms plus 3 000 000, the YUV converter plus 4 000 000, VP9's inverse transforms plus 5 000 000,
// VP9's loop filters plus 6 000 000, the arithmetic decoders plus 7 000 000.
describe('SIMD128 decoding kernels equal ffmpeg C', () => {
  it('in the single-threaded module, over 12 rounds of random and extreme blocks', async () => {
    const module = await loadSingleModule(warn);
    for (let seed = 1; seed <= 3; seed++) expect(module.exports._td_simd_check(seed, 4), `seed ${seed}`).toBe(0);
  }, 120_000);

  it('in the pthreads module', async () => {
    const module = await loadDecodeModule(1, warn);
    try {
      expect(module.exports._td_simd_check(7, 4)).toBe(0);
    } finally {
      module.close();
    }
  }, 120_000);
});
