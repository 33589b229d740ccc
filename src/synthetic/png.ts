// A dependency-free PNG encoder for fixtures: grey, grey+alpha, RGB, RGBA at 8 or 16 bits, and
// palette images at 1/2/4/8 bits. The zlib stream uses stored (uncompressed) deflate blocks and
// filter type 0: files are larger than usual, but the encoder is tiny, exact and deterministic,
// and every conforming decoder (ffmpeg's included) must accept them.

/** Growable byte buffer shared by the encoders here (amortised doubling, no per-byte allocation). */
export class ByteSink {
  private buf: Uint8Array;
  private len = 0;
  constructor(capacity = 1024) {
    this.buf = new Uint8Array(Math.max(16, capacity));
  }
  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
  get length(): number {
    return this.len;
  }
  u8(b: number): void {
    this.reserve(1);
    this.buf[this.len++] = b;
  }
  u16be(v: number): void {
    this.bytes([(v >>> 8) & 0xff, v & 0xff]);
  }
  u32be(v: number): void {
    this.bytes([(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff]);
  }
  u16le(v: number): void {
    this.bytes([v & 0xff, (v >>> 8) & 0xff]);
  }
  u32le(v: number): void {
    this.bytes([v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff]);
  }
  bytes(src: ArrayLike<number>): void {
    this.reserve(src.length);
    this.buf.set(src, this.len);
    this.len += src.length;
  }
  /** Bytes [from, to) written so far, as a view (no copy). */
  view(from = 0, to = this.len): Uint8Array {
    return this.buf.subarray(from, to);
  }
  /** The written bytes, trimmed to an exactly sized copy the caller owns. */
  result(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

const CRC_TABLE: Uint32Array = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (ISO 3309 / ITU-T V.42, as PNG and zlib's crc32 define it). */
export function crc32(data: Uint8Array, crc = 0): number {
  let c = ~crc >>> 0;
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** Adler-32 (RFC 1950). Sums are reduced every 5552 bytes, the most that cannot overflow 2^53. */
export function adler32(data: Uint8Array): number {
  let a = 1,
    b = 0;
  for (let i = 0; i < data.length; ) {
    const end = Math.min(data.length, i + 5552);
    for (; i < end; i++) {
      a += data[i]!;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** zlib stream of stored deflate blocks (RFC 1950/1951), each at most 65535 bytes. */
export function zlibStored(data: Uint8Array): Uint8Array {
  const out = new ByteSink(data.length + 16 + 5 * Math.ceil(data.length / 65535));
  out.bytes([0x78, 0x01]); // CM=8, 32K window, FCHECK so that 0x7801 % 31 == 0, no dictionary
  let pos = 0;
  do {
    const n = Math.min(65535, data.length - pos);
    out.u8(pos + n >= data.length ? 1 : 0); // BFINAL on the last block, BTYPE=00 (stored)
    out.u16le(n);
    out.u16le(~n & 0xffff);
    out.bytes(data.subarray(pos, pos + n));
    pos += n;
  } while (pos < data.length);
  out.u32be(adler32(data));
  return out.result();
}

function chunk(out: ByteSink, type: string, data: Uint8Array): void {
  out.u32be(data.length);
  const start = out.length;
  out.bytes(Array.from(type, (c) => c.charCodeAt(0)));
  out.bytes(data);
  out.u32be(crc32(out.view(start)));
}

function assemble(
  width: number,
  height: number,
  bitDepth: number,
  colorType: number,
  raw: Uint8Array,
  extra: readonly [string, Uint8Array][] = [],
): Uint8Array {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1 || width > 0x7fffffff || height > 0x7fffffff) {
    throw new RangeError(`png: bad size ${width}x${height}`);
  }
  const out = new ByteSink(raw.length + 256);
  out.bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const ihdr = new ByteSink(13);
  ihdr.u32be(width);
  ihdr.u32be(height);
  ihdr.bytes([bitDepth, colorType, 0, 0, 0]); // deflate, adaptive filtering, no interlace
  chunk(out, 'IHDR', ihdr.result());
  for (const [type, data] of extra) chunk(out, type, data);
  chunk(out, 'IDAT', zlibStored(raw));
  chunk(out, 'IEND', new Uint8Array(0));
  return out.result();
}

export interface PngOptions {
  channels?: 1 | 2 | 3 | 4; // grey, grey+alpha, RGB, RGBA; default 3
  bitDepth?: 8 | 16; // default 8
}

const COLOR_TYPE = { 1: 0, 2: 4, 3: 2, 4: 6 } as const;

/**
 * Encodes interleaved HWC samples. For 16 bits pass a Uint16Array of native values; PNG stores
 * them big-endian, which is done here so callers never think about byte order.
 */
export function encodePng(pixels: Uint8Array | Uint16Array, width: number, height: number, opts: PngOptions = {}): Uint8Array {
  const { channels = 3, bitDepth = 8 } = opts;
  const n = width * height * channels;
  if (pixels.length !== n) throw new RangeError(`encodePng: expected ${n} samples, got ${pixels.length}`);
  if ((bitDepth === 16) !== pixels instanceof Uint16Array) {
    throw new TypeError('encodePng: use a Uint16Array for bitDepth 16 and a Uint8Array for 8');
  }
  const rowSamples = width * channels,
    rowBytes = rowSamples * (bitDepth / 8);
  const raw = new Uint8Array(height * (rowBytes + 1)); // filter byte 0 (None) is already there
  for (let y = 0; y < height; y++) {
    const o = y * (rowBytes + 1) + 1;
    if (bitDepth === 8) raw.set(pixels.subarray(y * rowSamples, (y + 1) * rowSamples), o);
    else {
      for (let i = 0; i < rowSamples; i++) {
        const v = pixels[y * rowSamples + i]!;
        raw[o + 2 * i] = v >>> 8;
        raw[o + 2 * i + 1] = v & 0xff;
      }
    }
  }
  return assemble(width, height, bitDepth, COLOR_TYPE[channels], raw);
}

export interface PngPaletteOptions {
  bitDepth?: 1 | 2 | 4 | 8; // index width; default 8. Narrow indices are packed MSB-first.
  paletteChannels?: 3 | 4; // palette entries are RGB or RGBA (alpha goes to tRNS); default 3
}

/** Encodes one palette index per pixel (row-major) with a PLTE (and tRNS if RGBA) chunk. */
export function encodePngPalette(
  indices: Uint8Array,
  palette: Uint8Array,
  width: number,
  height: number,
  opts: PngPaletteOptions = {},
): Uint8Array {
  const { bitDepth = 8, paletteChannels = 3 } = opts;
  const entries = palette.length / paletteChannels;
  if (!Number.isInteger(entries) || entries < 1 || entries > Math.min(256, 1 << bitDepth)) {
    throw new RangeError(`encodePngPalette: ${palette.length} bytes is not 1..${Math.min(256, 1 << bitDepth)} entries`);
  }
  if (indices.length !== width * height) throw new RangeError('encodePngPalette: need one index per pixel');
  const rowBytes = Math.ceil((width * bitDepth) / 8);
  const raw = new Uint8Array(height * (rowBytes + 1));
  const perByte = 8 / bitDepth;
  for (let y = 0; y < height; y++) {
    const o = y * (rowBytes + 1) + 1;
    for (let x = 0; x < width; x++) {
      const v = indices[y * width + x]!;
      if (v >= entries) throw new RangeError(`encodePngPalette: index ${v} at (${x}, ${y}) is past the palette`);
      const shift = 8 - bitDepth * ((x % perByte) + 1);
      raw[o + Math.floor(x / perByte)]! |= v << shift;
    }
  }
  const plte = new Uint8Array(entries * 3),
    trns = new Uint8Array(entries);
  for (let i = 0; i < entries; i++) {
    plte.set(palette.subarray(i * paletteChannels, i * paletteChannels + 3), i * 3);
    trns[i] = paletteChannels === 4 ? palette[i * paletteChannels + 3]! : 255;
  }
  const extra: [string, Uint8Array][] = [['PLTE', plte]];
  if (paletteChannels === 4) extra.push(['tRNS', trns]);
  return assemble(width, height, bitDepth, 3, raw, extra);
}
