// Synthetic data and fixture encoders. Node-only: node:zlib is the independent reference for
// CRC-32, deflate and Adler-32, so the encoders are not checked against themselves.
import { crc32 as zlibCrc32, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  MAX_CLASSES,
  Rng,
  SHAPE_NAMES,
  ZIGZAG,
  applyExifOrientation,
  encodeBmp,
  encodeJpeg,
  encodePng,
  encodePngPalette,
  labelFor,
  renderDataset,
  renderSample,
  scaleQuantTable,
  solidPatches,
  streamFor,
  zlibStored,
} from '../../src/synthetic/index.ts';

const be16 = (b: Uint8Array, o: number): number => (b[o]! << 8) | b[o + 1]!;
const be32 = (b: Uint8Array, o: number): number => ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
const le32 = (b: Uint8Array, o: number): number => (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));

describe('random', () => {
  it('is deterministic, in range, and random-access by index', () => {
    const a = new Rng(123),
      b = new Rng(123);
    expect(Array.from({ length: 100 }, () => a.next())).toEqual(Array.from({ length: 100 }, () => b.next()));
    const r = new Rng(9),
      floats = Array.from({ length: 1000 }, () => r.float());
    expect(floats.every((f) => f >= 0 && f < 1)).toBe(true);
    expect(new Set(Array.from({ length: 1000 }, () => r.int(7)))).toEqual(new Set([0, 1, 2, 3, 4, 5, 6]));
    // Stream i depends only on (seed, i), including indices past 2^32.
    const first = (seed: number, i: number): number => streamFor(seed, i).next();
    expect(first(5, 10)).toBe(first(5, 10));
    expect(new Set([first(5, 10), first(5, 11), first(6, 10), first(5, 1), first(5, 2 ** 32 + 1)]).size).toBe(5);
  });
});

describe('renderSample', () => {
  it('is a pure function of (seed, index, options) with contrast and texture', () => {
    const a = renderSample(1, 17);
    expect([a.width, a.height, a.rgb.length, a.className]).toEqual([500, 375, 500 * 375 * 3, SHAPE_NAMES[a.label]]);
    expect(same(a.rgb, renderSample(1, 17).rgb)).toBe(true);
    expect([same(a.rgb, renderSample(1, 18).rgb), same(a.rgb, renderSample(2, 17).rgb)]).toEqual([false, false]);
    for (const bad of [{ classes: MAX_CLASSES + 1 }, { classes: 0 }, { width: 3.5 }]) {
      expect(() => renderSample(0, 0, bad)).toThrow(RangeError);
    }
  });

  it('matches golden checksums (same bytes in every runtime)', () => {
    // Node, Deno and Chromium (all V8) must agree bit for bit. Update only on an intended change.
    let sample = 0,
      jpeg = 0;
    for (const s of renderDataset(1, 16, { width: 64, height: 48, classes: 8 })) {
      sample = zlibCrc32(s.rgb, sample);
      jpeg = zlibCrc32(encodeJpeg(s.rgb, 64, 48, { quality: 75 }), jpeg);
    }
    expect({ sample, jpeg }).toEqual({ sample: 1086195756, jpeg: 4045388381 });
  });

  it('balances labels over 400 samples and uses every class', () => {
    for (const classes of [4, 8, 3]) {
      const counts = new Array<number>(classes).fill(0);
      for (const s of renderDataset(3, 400, { width: 24, height: 16, classes })) {
        expect(s.label).toBe(labelFor(3, s.index, classes));
        counts[s.label]!++;
        expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1); // every prefix
      }
      expect(counts.reduce((x, y) => x + y)).toBe(400);
    }
    const first40 = Array.from({ length: 40 }, (_, i) => labelFor(9, i, 4) - (i % 4));
    expect(first40.some((d) => d !== 0)).toBe(true); // shuffled, not index % classes
    const s = renderSample(4, 2, { width: 64, height: 64 });
    const lum = Array.from({ length: 64 * 64 }, (_, i) => s.rgb[3 * i]! + s.rgb[3 * i + 1]! + s.rgb[3 * i + 2]!);
    const sorted = [...lum].sort((x, y) => x - y); // shape/background brightness contrast, and texture:
    expect([sorted[sorted.length - 20]! - sorted[20]! > 150, new Set(lum).size > 100]).toEqual([true, true]);
  });
});

describe('solidPatches', () => {
  it('knows the exact colour of every pixel', () => {
    for (const [w, h, c, r] of [
      [203, 117, 4, 4],
      [64, 64, 4, 4],
      [50, 30, 5, 4],
    ] as const) {
      const p = solidPatches(w, h, c, r);
      const expected = new Uint8Array(w * h * 3),
        colours = new Set<string>();
      let minEdge = Infinity;
      for (let i = 0; i < w * h; i++) {
        expected.set(p.colorAt(i % w, Math.floor(i / w)), i * 3);
        colours.add(p.colorAt(i % w, Math.floor(i / w)).join());
        minEdge = Math.min(minEdge, p.edgeDistance(i % w, Math.floor(i / w)));
      }
      expect(same(expected, p.rgb)).toBe(true);
      expect([colours.size, minEdge]).toEqual([c * r, 0]);
    }
    const p = solidPatches(100, 100);
    expect([p.edgeDistance(24, 10), p.edgeDistance(25, 10), p.edgeDistance(12, 12)]).toEqual([0, 0, 12]);
  });
});

/** Walks PNG chunks, checking every CRC against node:zlib's crc32. */
function pngChunks(png: Uint8Array): Map<string, Uint8Array[]> {
  expect(Array.from(png.subarray(0, 8))).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const chunks = new Map<string, Uint8Array[]>();
  let p = 8;
  for (let n = 0; p < png.length; p += 12 + n) {
    n = be32(png, p);
    expect(be32(png, p + 8 + n)).toBe(zlibCrc32(png.subarray(p + 4, p + 8 + n)));
    const type = String.fromCharCode(...png.subarray(p + 4, p + 8));
    chunks.set(type, [...(chunks.get(type) ?? []), png.subarray(p + 8, p + 8 + n)]);
  }
  expect(p).toBe(png.length);
  return chunks;
}

/** Inflates IDAT with node:zlib (which also checks Adler-32) and re-checks Adler-32 by RFC 1950. */
function inflateIdat(chunks: Map<string, Uint8Array[]>): Uint8Array {
  const z = Buffer.concat(chunks.get('IDAT') ?? []),
    raw = new Uint8Array(inflateSync(z));
  let a = 1,
    b = 0;
  for (const x of raw) [a, b] = [(a + x) % 65521, (b + a + x) % 65521];
  expect(be32(z, z.length - 4)).toBe(b * 65536 + a);
  return raw;
}

describe('png', () => {
  it('writes valid chunks and stored zlib for 8- and 16-bit images of 1..4 channels', () => {
    for (const channels of [1, 2, 3, 4] as const) {
      const w = 37,
        h = 5,
        n = w * h * channels,
        px8 = Uint8Array.from({ length: n }, (_, i) => (i * 31) & 0xff);
      const c8 = pngChunks(encodePng(px8, w, h, { channels })),
        ihdr = c8.get('IHDR')![0]!;
      expect([be32(ihdr, 0), be32(ihdr, 4), ihdr[8], ihdr[9]]).toEqual([w, h, 8, [0, 4, 2, 6][channels - 1]]);
      // Rows are a filter byte 0 (None) then the samples; 16-bit samples big-endian.
      const rows = (bytes: number): Uint8Array => new Uint8Array(h * (w * channels * bytes + 1));
      const want8 = rows(1),
        want16 = rows(2);
      const px16 = Uint16Array.from({ length: n }, (_, i) => (i * 2741) & 0xffff);
      for (let i = 0; i < n; i++) {
        const y = Math.floor(i / (w * channels));
        want8[i + y + 1] = px8[i]!;
        want16.set([px16[i]! >> 8, px16[i]! & 255], 2 * i + y + 1);
      }
      expect(same(inflateIdat(c8), want8)).toBe(true);
      expect(same(inflateIdat(pngChunks(encodePng(px16, w, h, { channels, bitDepth: 16 }))), want16)).toBe(true);
    }
  });

  it('packs palette indices at 1/2/4/8 bits, with tRNS for RGBA palettes', () => {
    for (const bitDepth of [1, 2, 4, 8] as const) {
      const entries = Math.min(256, 1 << bitDepth),
        w = 13,
        h = 3;
      const idx = Uint8Array.from({ length: w * h }, (_, i) => (i * 7) % entries);
      const pal = Uint8Array.from({ length: entries * 4 }, (_, i) => (i * 5) & 0xff);
      const chunks = pngChunks(encodePngPalette(idx, pal, w, h, { bitDepth, paletteChannels: 4 }));
      const [ihdr, plte, trns] = ['IHDR', 'PLTE', 'tRNS'].map((t) => chunks.get(t)![0]!);
      expect([ihdr![8], ihdr![9], plte!.length, trns![1]]).toEqual([bitDepth, 3, entries * 3, pal[7]]);
      const raw = inflateIdat(chunks),
        rowBytes = Math.ceil((w * bitDepth) / 8);
      for (let i = 0; i < w * h; i++) {
        const y = Math.floor(i / w),
          x = i % w,
          bit = x * bitDepth;
        const byte = raw[y * (rowBytes + 1) + 1 + (bit >> 3)]!;
        expect((byte >> (8 - bitDepth - (bit & 7))) & (entries - 1)).toBe(idx[i]);
      }
    }
    expect(() => encodePngPalette(new Uint8Array([2]), new Uint8Array(6), 1, 1)).toThrow(RangeError);
  });

  it('splits long data into 65535-byte stored blocks', () => {
    for (const n of [0, 1, 65535, 65536, 200000]) {
      const data = Uint8Array.from({ length: n }, (_, i) => (i * 13) & 0xff),
        z = zlibStored(data);
      expect(same(new Uint8Array(inflateSync(z)), data)).toBe(true);
      expect(z.length).toBe(2 + 5 * Math.max(1, Math.ceil(n / 65535)) + n + 4);
    }
  });
});

/** Splits a JPEG into marker segments up to SOS, then checks the scan's byte stuffing. */
function jpegSegments(jpg: Uint8Array): { marker: number; body: Uint8Array }[] {
  expect([jpg[0], jpg[1], jpg[jpg.length - 2], jpg[jpg.length - 1]]).toEqual([0xff, 0xd8, 0xff, 0xd9]);
  const segs: { marker: number; body: Uint8Array }[] = [];
  let p = 2;
  for (;;) {
    const marker = jpg[p + 1]!,
      len = be16(jpg, p + 2);
    expect([jpg[p], len >= 2 && p + 2 + len < jpg.length]).toEqual([0xff, true]);
    segs.push({ marker, body: jpg.subarray(p + 4, p + 2 + len) });
    p += 2 + len;
    if (marker === 0xda) break;
  }
  // Every 0xFF in the scan is stuffed (no RST or other markers before EOI).
  for (let i = p; i < jpg.length - 2; i++) if (jpg[i] === 0xff) expect(jpg[++i]).toBe(0x00);
  return segs;
}

describe('jpeg', () => {
  const s = renderSample(11, 5, { width: 120, height: 90 });
  it('writes SOI, APP0, DQT, SOF0, DHT, SOS, EOI with consistent lengths', () => {
    for (const subsampling of ['420', '444'] as const) {
      const segs = jpegSegments(encodeJpeg(s.rgb, 120, 90, { quality: 90, subsampling }));
      expect(segs.map((g) => g.marker)).toEqual([0xe0, 0xdb, 0xc0, 0xc4, 0xda]);
      const [app0, dqt, sof, dht, sos] = segs.map((g) => g.body);
      expect(String.fromCharCode(...app0!.subarray(0, 5))).toBe('JFIF\0');
      // Same bytes as libjpeg-turbo 2.1 writes at quality 90: IJG-scaled Annex K quantisation
      // tables in zigzag order, and the Annex K Huffman tables DC0, AC0, DC1, AC1.
      expect([dqt!.length, zlibCrc32(dqt!), dht!.length, zlibCrc32(dht!)]).toEqual([130, 1680752787, 416, 2064773546]);
      expect(Array.from(sof!)).toEqual([8, 0, 90, 0, 120, 3, 1, subsampling === '420' ? 0x22 : 0x11, 0, 2, 0x11, 1, 3, 0x11, 1]);
      expect(Array.from(sos!)).toEqual([3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]);
    }
    expect(ZIGZAG.slice(0, 10)).toEqual(Uint8Array.from([0, 1, 8, 16, 9, 2, 3, 10, 17, 24]));
    expect(Array.from(scaleQuantTable([16, 255, 1], 50))).toEqual([16, 255, 1]);
  });

  it('is deterministic and shrinks as quality falls', () => {
    const big = renderSample(11, 6);
    const a = encodeJpeg(big.rgb, 500, 375);
    expect(same(a, encodeJpeg(big.rgb, 500, 375))).toBe(true);
    const sizes = [100, 90, 75, 50, 25, 5].map((quality) => encodeJpeg(big.rgb, 500, 375, { quality }).length);
    for (let i = 1; i < sizes.length; i++) expect(sizes[i]).toBeLessThan(sizes[i - 1]!);
    expect(encodeJpeg(big.rgb, 500, 375, { subsampling: '444' }).length).toBeGreaterThan(a.length);
  });

  it('encodes grayscale, odd sizes, one-channel input', () => {
    const gray = jpegSegments(encodeJpeg(s.rgb, 120, 90, { grayscale: true }));
    expect([gray.map((g) => g.marker), gray[2]!.body[5], gray[1]!.body.length]).toEqual([[0xe0, 0xdb, 0xc0, 0xc4, 0xda], 1, 65]);
    for (const [w, h] of [
      [1, 1],
      [17, 9],
      [33, 31],
      [8, 16],
    ] as const) {
      expect(be16(jpegSegments(encodeJpeg(solidPatches(w, h, 1, 1).rgb, w, h))[2]!.body, 3)).toBe(w);
      jpegSegments(encodeJpeg(new Uint8Array(w * h).fill(77), w, h));
    }
    expect(() => encodeJpeg(new Uint8Array(10), 2, 2)).toThrow(RangeError);
  });

  it('writes the Exif orientation tag in APP1', () => {
    for (let o = 1; o <= 8; o++) {
      const segs = jpegSegments(encodeJpeg(s.rgb, 120, 90, { exifOrientation: o }));
      const app1 = segs.find((g) => g.marker === 0xe1)!.body;
      // "Exif\0\0", TIFF "MM" 42 IFD0@8, 1 entry: tag 0x0112 SHORT count 1 value o, no next IFD.
      expect(String.fromCharCode(...app1.subarray(0, 8))).toBe('Exif\0\0MM');
      const t = app1.subarray(6);
      expect([be16(t, 2), be32(t, 4), be16(t, 8), be16(t, 10), be16(t, 12), be32(t, 14), be16(t, 18), be32(t, 22)]).toEqual([
        42,
        8,
        1,
        0x0112,
        3,
        1,
        o,
        0,
      ]);
    }
    expect(() => encodeJpeg(s.rgb, 120, 90, { exifOrientation: 9 })).toThrow(RangeError);
  });
});

describe('bmp and EXIF orientation helper', () => {
  it('writes a bottom-up 24-bit BMP with padded rows', () => {
    const w = 5,
      h = 3,
      p = solidPatches(w, h, 5, 3);
    const bmp = encodeBmp(p.rgb, w, h);
    expect([bmp[0], bmp[1], le32(bmp, 2), le32(bmp, 10), le32(bmp, 18), le32(bmp, 22)]).toEqual([0x42, 0x4d, bmp.length, 54, w, h]);
    const want = new Uint8Array(16 * h); // rows of 5 * 3 = 15 bytes padded to 16, BGR, bottom row first
    for (let i = 0; i < w * h; i++)
      want.set([...p.colorAt(i % w, Math.floor(i / w))].reverse(), (h - 1 - Math.floor(i / w)) * 16 + (i % w) * 3);
    expect(same(bmp.subarray(54), want)).toBe(true);
  });

  it('maps orientations as the EXIF table says, and inverse undoes them', () => {
    // 3x2 image with pixel value = its index; orientation 6 turns it 90 degrees clockwise.
    const img = Uint8Array.from([0, 1, 2, 3, 4, 5]);
    expect(applyExifOrientation(img, 3, 2, 1, 6)).toEqual({ pixels: Uint8Array.from([3, 0, 4, 1, 5, 2]), width: 2, height: 3 });
    expect([2, 8].map((o) => Array.from(applyExifOrientation(img, 3, 2, 1, o).pixels))).toEqual([
      [2, 1, 0, 5, 4, 3],
      [2, 5, 1, 4, 0, 3],
    ]);
    const p = solidPatches(7, 4, 2, 2);
    for (let o = 1; o <= 8; o++) {
      const stored = applyExifOrientation(p.rgb, 7, 4, 3, o, true);
      const shown = applyExifOrientation(stored.pixels, stored.width, stored.height, 3, o);
      expect([shown.width, shown.height, same(shown.pixels, p.rgb)]).toEqual([7, 4, true]);
    }
  });
});
