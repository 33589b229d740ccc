// Synthetic labelled image data made by the project itself: seeded shape images, flat-colour test
// patterns, and from-scratch JPEG / PNG / BMP encoders to turn them into fixture files. Pure
// TypeScript with no platform imports, so it runs unchanged in Node, Deno and browsers.

export { Rng, hash3, mix32, streamFor } from '../random/index.ts';
export {
  MAX_CLASSES,
  SHAPE_NAMES,
  labelFor,
  renderDataset,
  renderSample,
  solidPatches,
} from './shapes.ts';
export type { PatchPattern, ShapeName, SyntheticSample, SyntheticSampleOptions } from './shapes.ts';
export { MOTION_NAMES, motionLabelFor, movingFrame, renderMovingDataset, renderMovingSample } from './moving.ts';
export type { MotionName, MovingSample, MovingSampleOptions } from './moving.ts';
export { ZIGZAG, encodeJpeg, scaleQuantTable } from './jpeg.ts';
export type { JpegOptions } from './jpeg.ts';
export { ByteSink, adler32, crc32, encodePng, encodePngPalette, zlibStored } from './png.ts';
export type { PngOptions, PngPaletteOptions } from './png.ts';
export { encodeBmp } from './bmp.ts';
export {
  CORPUS_ALPHABET,
  CORPUS_BOS,
  CORPUS_BOS_TOKEN,
  CORPUS_EOS,
  CORPUS_EOS_TOKEN,
  CORPUS_MAX_CHARS,
  CORPUS_MIN_CHARS,
  CORPUS_VOCAB_SIZE,
  corpusDocument,
  corpusDocuments,
  corpusIds,
  corpusText,
} from './text.ts';
export { corpusTokenizerJson } from './text-tokenizer.ts';
export type { BmpOptions } from './bmp.ts';

export interface OrientedImage {
  pixels: Uint8Array;
  width: number;
  height: number;
}

// Stored pixel (sx, sy) shown at display (x, y), per EXIF orientation 1..8 (the spec's "0th row /
// 0th column" table): sx = a*x + b*y + c*(W-1), sy = d*x + e*y + f*(H-1), W x H the stored size.
const ORIENT: readonly (readonly [number, number, number, number, number, number])[] = [
  [1, 0, 0, 0, 1, 0],
  [-1, 0, 1, 0, 1, 0],
  [-1, 0, 1, 0, -1, 1],
  [1, 0, 0, 0, -1, 1],
  [0, 1, 0, 1, 0, 0],
  [0, 1, 0, -1, 0, 1],
  [0, -1, 1, -1, 0, 1],
  [0, -1, 1, 1, 0, 0],
];

/**
 * What an EXIF-aware viewer shows for stored pixels with this orientation tag; with
 * `inverse`, the stored pixels to write so that a viewer shows `pixels`. EXIF tests use the
 * inverse to make a file whose correctly oriented decode is a known pattern.
 */
export function applyExifOrientation(
  pixels: Uint8Array,
  width: number,
  height: number,
  channels: number,
  orientation: number,
  inverse = false,
): OrientedImage {
  const m = ORIENT[orientation - 1];
  if (!m) throw new RangeError(`applyExifOrientation: orientation ${orientation} is not 1..8`);
  const [a, b, c, d, e, f] = m;
  const swap = orientation >= 5;
  const dw = inverse || !swap ? width : height,
    dh = inverse || !swap ? height : width; // display size
  const sw = swap ? dh : dw,
    sh = swap ? dw : dh; // stored size
  const out = new Uint8Array(pixels.length);
  for (let y = 0; y < dh; y++) {
    for (let x = 0; x < dw; x++) {
      const sx = a * x + b * y + c * (sw - 1),
        sy = d * x + e * y + f * (sh - 1);
      const di = (y * dw + x) * channels,
        si = (sy * sw + sx) * channels;
      for (let k = 0; k < channels; k++) {
        if (inverse) out[si + k] = pixels[di + k]!;
        else out[di + k] = pixels[si + k]!;
      }
    }
  }
  return inverse ? { pixels: out, width: sw, height: sh } : { pixels: out, width: dw, height: dh };
}
