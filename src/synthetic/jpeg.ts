// A from-scratch baseline JPEG encoder (JFIF, Huffman, 8-bit), so the project can make JPEG
// fixtures and its default dataset with no downloads and no native code. Follows ITU T.81:
// Annex K quantisation and Huffman tables, IJG quality scaling, the AAN float DCT of IJG's
// jfdctflt.c with its scale factors folded into the quantiser divisors.
//
// Typed-array reads use `!`: noUncheckedIndexedAccess cannot see the loop bounds, and a `?? 0`
// in every inner loop would only hide real indexing bugs.

import { ByteSink } from './png.ts';

export interface JpegOptions {
  quality?: number; // 1..100, default 90
  subsampling?: '420' | '444'; // chroma subsampling, default '420'
  grayscale?: boolean; // one-component output; implied when the input has one channel
  exifOrientation?: number; // 1..8; writes an APP1 Exif segment carrying only this tag
}

const LUMA_Q = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62, 18, 22,
  37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
];
const CHROMA_Q = [
  17,
  18,
  24,
  47,
  99,
  99,
  99,
  99,
  18,
  21,
  26,
  66,
  99,
  99,
  99,
  99,
  24,
  26,
  56,
  99,
  99,
  99,
  99,
  99,
  47,
  66,
  99,
  99,
  99,
  99,
  99,
  99,
  ...new Array<number>(32).fill(99),
];
// Annex K.3 Huffman tables: code counts per length 1..16, then symbols.
const DC_LUMA_BITS = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0];
const DC_CHROMA_BITS = [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0];
const DC_VALS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
const AC_LUMA_BITS = [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d];
const AC_LUMA_VALS = hex(
  '01020300041105122131410613516107227114328191a1082342b1c11552d1f02433627282090a161718191a25262728' +
    '292a3435363738393a434445464748494a535455565758595a636465666768696a737475767778797a83848586878889' +
    '8a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2' +
    'e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9fa',
);
const AC_CHROMA_BITS = [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77];
const AC_CHROMA_VALS = hex(
  '000102031104052131061241510761711322328108144291a1b1c109233352f0156272d10a162434e125f11718191a26' +
    '2728292a35363738393a434445464748494a535455565758595a636465666768696a737475767778797a828384858687' +
    '88898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9da' +
    'e2e3e4e5e6e7e8e9eaf2f3f4f5f6f7f8f9fa',
);

function hex(s: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < s.length; i += 2) out.push(parseInt(s.slice(i, i + 2), 16));
  return out;
}

/** ZIGZAG[k] = row-major index of the k-th coefficient in zigzag order. */
export const ZIGZAG: Uint8Array = (() => {
  const z = new Uint8Array(64);
  let k = 0;
  for (let s = 0; s < 15; s++) {
    const lo = Math.max(0, s - 7),
      hi = Math.min(s, 7);
    if (s % 2 === 0) for (let r = hi; r >= lo; r--) z[k++] = r * 8 + s - r;
    else for (let r = lo; r <= hi; r++) z[k++] = r * 8 + s - r;
  }
  return z;
})();

/** IJG's quality scaling (jcparam.c), clamped to 1..255 so tables stay 8-bit (baseline). */
export function scaleQuantTable(base: readonly number[], quality: number): Uint8Array {
  const q = Math.min(100, Math.max(1, Math.round(quality)));
  const scale = q < 50 ? Math.floor(5000 / q) : 200 - q * 2;
  return Uint8Array.from(base, (b) => Math.min(255, Math.max(1, Math.floor((b * scale + 50) / 100))));
}

interface Huffman {
  code: Uint16Array;
  size: Uint8Array;
}

/** Canonical codes from counts per length (T.81 Annex C). */
function buildHuffman(bits: readonly number[], vals: readonly number[]): Huffman {
  const code = new Uint16Array(256),
    size = new Uint8Array(256);
  let c = 0,
    k = 0;
  for (let len = 1; len <= 16; len++, c <<= 1) {
    for (let i = 0; i < (bits[len - 1] ?? 0); i++, k++, c++) {
      code[vals[k] ?? 0] = c;
      size[vals[k] ?? 0] = len;
    }
  }
  return { code, size };
}

const HUFF = {
  dcL: buildHuffman(DC_LUMA_BITS, DC_VALS),
  acL: buildHuffman(AC_LUMA_BITS, AC_LUMA_VALS),
  dcC: buildHuffman(DC_CHROMA_BITS, DC_VALS),
  acC: buildHuffman(AC_CHROMA_BITS, AC_CHROMA_VALS),
};

/** Entropy-coded segment writer: MSB-first bits, a 0x00 stuffed after every 0xFF byte. */
class BitWriter {
  private acc = 0; // pending bits, right-aligned
  private n = 0; // how many
  constructor(private readonly out: ByteSink) {}
  write(bits: number, len: number): void {
    this.acc = (this.acc << len) | (bits & ((1 << len) - 1));
    this.n += len;
    while (this.n >= 8) {
      this.n -= 8;
      const b = (this.acc >>> this.n) & 0xff;
      this.out.u8(b);
      if (b === 0xff) this.out.u8(0);
    }
    this.acc &= (1 << this.n) - 1;
  }
  /** Pads the last byte with 1 bits, as T.81 F.1.2.3 asks. */
  flush(): void {
    if (this.n > 0) this.write(0x7f, 8 - this.n);
  }
}

// AAN scale factors: the float DCT below yields coefficients scaled by AAN[u] * AAN[v] * 8.
const AAN = [1, 1.387039845, 1.306562965, 1.175875602, 1, 0.785694958, 0.5411961, 0.275899379];

/** Quantiser divisors (row-major, like the tables), the DCT's output scaling folded in. */
function divisors(table: Uint8Array): Float32Array {
  return Float32Array.from(table, (q, i) => q * AAN[i >> 3]! * AAN[i & 7]! * 8);
}

/** In-place 8x8 forward DCT, AAN flow graph (IJG jfdctflt.c); `stride` 1 = rows, 8 = columns. */
function fdct8(b: Float32Array, stride: number, step: number): void {
  for (let p = 0; p < 8; p++) {
    const o = p * step;
    const d0 = b[o]!,
      d1 = b[o + stride]!,
      d2 = b[o + 2 * stride]!,
      d3 = b[o + 3 * stride]!;
    const d4 = b[o + 4 * stride]!,
      d5 = b[o + 5 * stride]!,
      d6 = b[o + 6 * stride]!,
      d7 = b[o + 7 * stride]!;
    const t0 = d0 + d7,
      t7 = d0 - d7,
      t1 = d1 + d6,
      t6 = d1 - d6,
      t2 = d2 + d5,
      t5 = d2 - d5,
      t3 = d3 + d4,
      t4 = d3 - d4;
    const t10 = t0 + t3,
      t13 = t0 - t3,
      t11 = t1 + t2,
      t12 = t1 - t2;
    const z1 = (t12 + t13) * 0.707106781;
    b[o] = t10 + t11;
    b[o + 4 * stride] = t10 - t11;
    b[o + 2 * stride] = t13 + z1;
    b[o + 6 * stride] = t13 - z1;
    const s10 = t4 + t5,
      s11 = t5 + t6,
      s12 = t6 + t7;
    const z5 = (s10 - s12) * 0.382683433;
    const z2 = 0.5411961 * s10 + z5,
      z4 = 1.306562965 * s12 + z5,
      z3 = s11 * 0.707106781;
    const z11 = t7 + z3,
      z13 = t7 - z3;
    b[o + 5 * stride] = z13 + z2;
    b[o + 3 * stride] = z13 - z2;
    b[o + stride] = z11 + z4;
    b[o + 7 * stride] = z11 - z4;
  }
}

/** DCT, quantise and Huffman-code one level-shifted block; returns its DC for the next diff. */
function encodeBlock(blk: Float32Array, div: Float32Array, prevDc: number, dc: Huffman, ac: Huffman, bw: BitWriter): number {
  fdct8(blk, 1, 8);
  fdct8(blk, 8, 1);
  // Clamps keep categories within the tables' range (DC <= 11, AC <= 10 bits) despite rounding.
  const dcq = Math.max(-2047, Math.min(2047, Math.round(blk[0]! / div[0]!)));
  putValue(bw, dc, 0, dcq - prevDc);
  let run = 0;
  for (let k = 1; k < 64; k++) {
    const i = ZIGZAG[k]!;
    const v = Math.max(-1023, Math.min(1023, Math.round(blk[i]! / div[i]!)));
    if (v === 0) {
      run++;
      continue;
    }
    for (; run >= 16; run -= 16) bw.write(ac.code[0xf0]!, ac.size[0xf0]!); // ZRL
    putValue(bw, ac, run << 4, v);
    run = 0;
  }
  if (run > 0) bw.write(ac.code[0]!, ac.size[0]!); // EOB
  return dcq;
}

/** Writes symbol (prefix | category) then the category's magnitude bits (T.81 F.1.2.1). */
function putValue(bw: BitWriter, h: Huffman, prefix: number, v: number): void {
  const cat = v === 0 ? 0 : 32 - Math.clz32(Math.abs(v));
  bw.write(h.code[prefix | cat]!, h.size[prefix | cat]!);
  if (cat > 0) bw.write(v < 0 ? v - 1 : v, cat);
}

/** Fills blk from an MCU chroma plane: as is (4:4:4) or as 2x2 means of a 16x16 plane (4:2:0). */
function chromaBlock(plane: Float32Array, sub: boolean, blk: Float32Array): Float32Array {
  if (!sub) {
    blk.set(plane);
    return blk;
  }
  for (let i = 0; i < 64; i++) {
    const o = (i >> 3) * 32 + (i & 7) * 2; // top-left of the 2x2 group
    blk[i] = (plane[o]! + plane[o + 1]! + plane[o + 16]! + plane[o + 17]!) * 0.25;
  }
  return blk;
}

function segment(out: ByteSink, marker: number, body: readonly number[]): void {
  out.bytes([0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 0xff]);
  out.bytes(body);
}

function exifApp1(orientation: number): number[] {
  // "Exif\0\0", big-endian TIFF header, IFD0 with one SHORT entry 0x0112, no next IFD.
  return [
    0x45,
    0x78,
    0x69,
    0x66,
    0,
    0,
    0x4d,
    0x4d,
    0,
    0x2a,
    0,
    0,
    0,
    8,
    0,
    1,
    0x01,
    0x12,
    0,
    3,
    0,
    0,
    0,
    1,
    0,
    orientation,
    0,
    0,
    0,
    0,
    0,
    0,
  ];
}

/** Encodes HWC pixels (1 or 3 channels, inferred from the length) as a baseline JFIF JPEG. */
export function encodeJpeg(pixels: Uint8Array, width: number, height: number, opts: JpegOptions = {}): Uint8Array {
  const { quality = 90, subsampling = '420', exifOrientation } = opts;
  const okSize = (n: number): boolean => Number.isInteger(n) && n >= 1 && n <= 65535;
  if (!okSize(width) || !okSize(height)) throw new RangeError(`encodeJpeg: bad size ${width}x${height}`);
  const ch = pixels.length === width * height ? 1 : pixels.length === width * height * 3 ? 3 : 0;
  if (ch === 0) throw new RangeError(`encodeJpeg: ${pixels.length} bytes is neither 1 nor 3 channels of ${width}x${height}`);
  const eo = exifOrientation;
  if (eo !== undefined && !(Number.isInteger(eo) && eo >= 1 && eo <= 8))
    throw new RangeError(`encodeJpeg: exifOrientation ${eo} is not 1..8`);
  const gray = opts.grayscale === true || ch === 1;
  const sub = !gray && subsampling === '420';
  const qL = scaleQuantTable(LUMA_Q, quality),
    qC = scaleQuantTable(CHROMA_Q, quality);
  const out = new ByteSink(1024 + ((width * height) >> 1));
  out.bytes([0xff, 0xd8]); // SOI
  segment(out, 0xe0, [0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  if (eo !== undefined) segment(out, 0xe1, exifApp1(eo)); // JFIF wants APP0 first; readers find APP1 anywhere
  const zz = (t: Uint8Array): number[] => Array.from(ZIGZAG, (i) => t[i]!);
  segment(out, 0xdb, gray ? [0, ...zz(qL)] : [0, ...zz(qL), 1, ...zz(qC)]);
  const comps = gray ? [1, 0x11, 0] : [1, sub ? 0x22 : 0x11, 0, 2, 0x11, 1, 3, 0x11, 1];
  segment(out, 0xc0, [8, height >> 8, height & 255, width >> 8, width & 255, comps.length / 3, ...comps]);
  const dht = [0x00, ...DC_LUMA_BITS, ...DC_VALS, 0x10, ...AC_LUMA_BITS, ...AC_LUMA_VALS];
  if (!gray) dht.push(0x01, ...DC_CHROMA_BITS, ...DC_VALS, 0x11, ...AC_CHROMA_BITS, ...AC_CHROMA_VALS);
  segment(out, 0xc4, dht);
  segment(out, 0xda, gray ? [1, 1, 0x00, 0, 63, 0] : [3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]);

  const dL = divisors(qL),
    dC = divisors(qC);
  const bw = new BitWriter(out);
  const m = sub ? 16 : 8; // MCU side in pixels
  const Y = new Float32Array(m * m),
    Cb = new Float32Array(m * m),
    Cr = new Float32Array(m * m);
  const blk = new Float32Array(64);
  let pY = 0,
    pCb = 0,
    pCr = 0;
  for (let my = 0; my < height; my += m) {
    for (let mx = 0; mx < width; mx += m) {
      // Colour-convert the MCU, replicating the last row/column past the image edge.
      for (let y = 0; y < m; y++) {
        const row = Math.min(my + y, height - 1) * width;
        for (let x = 0; x < m; x++) {
          const p = (row + Math.min(mx + x, width - 1)) * ch;
          const r = pixels[p]!,
            g = ch === 3 ? pixels[p + 1]! : r,
            b = ch === 3 ? pixels[p + 2]! : r;
          Y[y * m + x] = 0.299 * r + 0.587 * g + 0.114 * b - 128;
          Cb[y * m + x] = -0.168736 * r - 0.331264 * g + 0.5 * b;
          Cr[y * m + x] = 0.5 * r - 0.418688 * g - 0.081312 * b;
        }
      }
      for (let by = 0; by < m; by += 8) {
        for (let bx = 0; bx < m; bx += 8) {
          for (let i = 0; i < 64; i++) blk[i] = Y[(by + (i >> 3)) * m + bx + (i & 7)]!;
          pY = encodeBlock(blk, dL, pY, HUFF.dcL, HUFF.acL, bw);
        }
      }
      if (gray) continue;
      pCb = encodeBlock(chromaBlock(Cb, sub, blk), dC, pCb, HUFF.dcC, HUFF.acC, bw);
      pCr = encodeBlock(chromaBlock(Cr, sub, blk), dC, pCr, HUFF.dcC, HUFF.acC, bw);
    }
  }
  bw.flush();
  out.bytes([0xff, 0xd9]); // EOI
  return out.result();
}
