// 24-bit BMP encoder (BITMAPINFOHEADER, uncompressed): the simplest container a decoder can be
// asked to read, useful to separate container bugs from codec bugs in decoder tests.

import { ByteSink } from './png.ts';

export interface BmpOptions {
  /** Store rows top-down (negative height). Default false: bottom-up, the common layout. */
  topDown?: boolean;
}

/** Encodes HWC RGB as a 24-bit BMP: BGR order, rows padded to 4 bytes. */
export function encodeBmp(rgb: Uint8Array, width: number, height: number, opts: BmpOptions = {}): Uint8Array {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`encodeBmp: bad size ${width}x${height}`);
  }
  if (rgb.length !== width * height * 3) throw new RangeError(`encodeBmp: expected ${width * height * 3} bytes, got ${rgb.length}`);
  const stride = (width * 3 + 3) & ~3;
  const imageSize = stride * height,
    offset = 14 + 40;
  const out = new ByteSink(offset + imageSize);
  out.bytes([0x42, 0x4d]); // "BM"
  out.u32le(offset + imageSize);
  out.u32le(0); // reserved
  out.u32le(offset);
  out.u32le(40); // BITMAPINFOHEADER
  out.u32le(width);
  out.u32le(opts.topDown === true ? -height >>> 0 : height);
  out.u16le(1); // planes
  out.u16le(24); // bits per pixel
  out.u32le(0); // BI_RGB
  out.u32le(imageSize);
  out.u32le(2835); // 72 dpi, in pixels per metre
  out.u32le(2835);
  out.u32le(0); // palette size
  out.u32le(0); // important colours
  const row = new Uint8Array(stride); // padding bytes stay zero
  for (let i = 0; i < height; i++) {
    const y = opts.topDown === true ? i : height - 1 - i;
    for (let x = 0, s = y * width * 3; x < width; x++, s += 3) {
      row[x * 3] = rgb[s + 2]!;
      row[x * 3 + 1] = rgb[s + 1]!;
      row[x * 3 + 2] = rgb[s]!;
    }
    out.bytes(row);
  }
  return out.result();
}
