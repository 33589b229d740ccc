// Synthetic labelled images: one geometric shape per image on a textured background.
//
// The project's default dataset and a test fixture: no downloads, same bytes in every runtime,
// learnable by a tiny ViT at 32x32 (the shape spans 40-72% of the short side and always
// contrasts in brightness), with gradients, stripes and noise so that JPEG has real work to do.

import { Rng, hash3, streamFor } from '../random/index.ts';

/** Class names in label order; `classes: n` uses the first n. */
export const SHAPE_NAMES = ['circle', 'square', 'triangle', 'cross', 'ring', 'star', 'crescent', 'arrow'] as const;
export type ShapeName = (typeof SHAPE_NAMES)[number];
export const MAX_CLASSES = SHAPE_NAMES.length;

export interface SyntheticSampleOptions {
  width?: number; // default 500 x 375, a typical ImageNet size
  height?: number;
  classes?: number; // 1..8, default 4
}

export interface SyntheticSample {
  index: number;
  label: number;
  className: ShapeName;
  rgb: Uint8Array; // HWC RGB, 8 bits per channel, no row padding
  width: number;
  height: number;
}

// Salts keep the label and the pixels of one index on unrelated streams.
const SALT_LABEL = 0x1abe1,
  SALT_PIXELS = 0x91c5;

function resolve(opts: SyntheticSampleOptions): Required<SyntheticSampleOptions> {
  const { width = 500, height = 375, classes = 4 } = opts;
  const int = (n: number, lo: number, hi: number): boolean => Number.isInteger(n) && n >= lo && n <= hi;
  if (!int(width, 8, 65535) || !int(height, 8, 65535)) throw new RangeError(`synthetic: bad size ${width}x${height}`);
  if (!int(classes, 1, MAX_CLASSES)) throw new RangeError(`synthetic: classes ${classes} is not 1..${MAX_CLASSES}`);
  return { width, height, classes };
}

/**
 * Label of item `index`. Indices are grouped in blocks of `classes`; each block is a seeded
 * permutation of all labels, so any prefix is balanced to within one sample per class (exactly
 * balanced at multiples of `classes`) while the order still looks random.
 */
export function labelFor(seed: number, index: number, classes: number): number {
  const block = Math.floor(index / classes);
  const pos = index - block * classes;
  const rng = new Rng(hash3(seed, block, SALT_LABEL));
  const perm = [0, 1, 2, 3, 4, 5, 6, 7].slice(0, classes);
  for (let i = classes - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [perm[i], perm[j]] = [perm[j] ?? 0, perm[i] ?? 0];
  }
  return perm[pos] ?? 0;
}

// ---- Shapes, as inside-tests in unit coordinates. Every shape fits in the unit disc, so the
// bounding box of a shape of radius r at (cx, cy) is [cx - r, cx + r] whatever its rotation.

type Inside = (u: number, v: number) => boolean;

const SQRT3 = Math.sqrt(3);
// 5-point star: the edge from the outer vertex (1, 0) to the inner vertex at angle pi/5.
const STAR_HALF = Math.PI / 5,
  STAR_INNER = 0.45;
const STAR_DX = STAR_INNER * Math.cos(STAR_HALF) - 1;
const STAR_DY = STAR_INNER * Math.sin(STAR_HALF);

const INSIDE: readonly Inside[] = [
  (u, v) => u * u + v * v <= 1,
  (u, v) => Math.abs(u) <= 0.7 && Math.abs(v) <= 0.7,
  (u, v) => v >= -0.5 && v <= 1 - SQRT3 * Math.abs(u),
  (u, v) => {
    const au = Math.abs(u),
      av = Math.abs(v);
    return (au <= 0.25 && av <= 0.95) || (av <= 0.25 && au <= 0.95);
  },
  (u, v) => u * u + v * v <= 1 && u * u + v * v >= 0.36,
  (u, v) => {
    const d2 = u * u + v * v;
    if (d2 > 1) return false;
    // Fold the angle into one half-spike, then intersect the ray with the spike edge.
    const a = Math.atan2(v, u);
    const t = Math.abs(a - 2 * STAR_HALF * Math.round(a / (2 * STAR_HALF)));
    const r = STAR_DY / (Math.cos(t) * STAR_DY - Math.sin(t) * STAR_DX);
    return d2 <= r * r;
  },
  (u, v) => u * u + v * v <= 1 && (u - 0.45) * (u - 0.45) + v * v > 0.64,
  (u, v) => {
    if (u >= -0.95 && u <= 0.2) return Math.abs(v) <= 0.2;
    return u > 0.2 && u <= 0.95 && Math.abs(v) <= (0.95 - u) * 0.8;
  },
];

/** HSV (all in [0, 1], hue wraps) to RGB in [0, 255]. Called a few times per image only. */
function hsv(h: number, s: number, v: number): [number, number, number] {
  const hh = (h - Math.floor(h)) * 6;
  const i = Math.floor(hh),
    f = hh - i;
  const p = v * (1 - s),
    q = v * (1 - s * f),
    t = v * (1 - s * (1 - f));
  const [r, g, b] = i === 0 ? [v, t, p] : i === 1 ? [q, v, p] : i === 2 ? [p, v, t] : i === 3 ? [p, q, v] : i === 4 ? [t, p, v] : [v, p, q];
  return [r * 255, g * 255, b * 255];
}

const clampByte = (x: number): number => (x <= 0 ? 0 : x >= 255 ? 255 : (x + 0.5) | 0);

function draw(rng: Rng, label: number, w: number, h: number): Uint8Array {
  const rgb = new Uint8Array(w * h * 3);
  // Brightness contrast is guaranteed (>= 0.3 in value); hue contrast is likely but not forced.
  const hue = rng.float();
  const bgV = rng.range(0.3, 0.85);
  const fgV = bgV > 0.575 ? bgV - rng.range(0.3, 0.45) : bgV + rng.range(0.3, 0.45);
  const bgA = hsv(hue, rng.range(0.15, 0.6), bgV);
  const bgB = hsv(hue + rng.range(-0.12, 0.12), rng.range(0.15, 0.6), bgV + rng.range(-0.12, 0.12));
  const fg = hsv(hue + rng.range(0.25, 0.75), rng.range(0.3, 0.9), fgV);
  const gAngle = rng.range(0, 2 * Math.PI);
  const gx = Math.cos(gAngle) / Math.hypot(w, h),
    gy = Math.sin(gAngle) / Math.hypot(w, h);
  const sAngle = rng.range(0, Math.PI),
    sPeriod = rng.range(5, 40);
  const kx = (2 * Math.PI * Math.cos(sAngle)) / sPeriod,
    ky = (2 * Math.PI * Math.sin(sAngle)) / sPeriod;
  const sPhase = rng.range(0, 2 * Math.PI),
    sAmp = rng.range(3, 12);
  const noiseAmp = rng.range(2, 9) / 127.5;
  const short = Math.min(w, h);
  const r = short * rng.range(0.2, 0.36);
  const cx = rng.range(r, w - r),
    cy = rng.range(r, h - r);
  const rot = rng.range(0, 2 * Math.PI),
    cr = Math.cos(rot) / r,
    sr = Math.sin(rot) / r;
  const shadeU = rng.range(-0.15, 0.15),
    shadeV = rng.range(-0.15, 0.15);
  const inside = INSIDE[label] ?? INSIDE[0]!;
  const x0 = Math.max(0, Math.floor(cx - r) - 1),
    x1 = Math.min(w - 1, Math.ceil(cx + r) + 1);
  const y0 = Math.max(0, Math.floor(cy - r) - 1),
    y1 = Math.min(h - 1, Math.ceil(cy + r) + 1);
  const noise = rng.fork(1);
  // sin(kx*x + ky*y + phase) split by the angle-sum identity: per-column tables and one sin/cos
  // per row instead of a Math.sin per pixel.
  const colSin = new Float64Array(w),
    colCos = new Float64Array(w);
  for (let x = 0; x < w; x++) {
    colSin[x] = sAmp * Math.sin(kx * x);
    colCos[x] = sAmp * Math.cos(kx * x);
  }

  let o = 0;
  for (let y = 0; y < h; y++) {
    const rowSin = Math.sin(ky * y + sPhase),
      rowCos = Math.cos(ky * y + sPhase);
    for (let x = 0; x < w; x++, o += 3) {
      const t = 0.5 + (x - w / 2) * gx + (y - h / 2) * gy;
      const stripe = colSin[x]! * rowCos + colCos[x]! * rowSin;
      let R = bgA[0] + (bgB[0] - bgA[0]) * t + stripe;
      let G = bgA[1] + (bgB[1] - bgA[1]) * t + stripe;
      let B = bgA[2] + (bgB[2] - bgA[2]) * t + stripe;
      if (x >= x0 && x <= x1 && y >= y0 && y <= y1) {
        // 2x2 supersampling: cheap anti-aliasing so edges look photographic, not pixel art.
        let hits = 0;
        for (let oy = 0.25; oy < 1; oy += 0.5) {
          for (let ox = 0.25; ox < 1; ox += 0.5) {
            const dx = x + ox - cx,
              dy = y + oy - cy;
            if (inside(dx * cr + dy * sr, dy * cr - dx * sr)) hits++;
          }
        }
        if (hits > 0) {
          const cov = hits / 4;
          const dx = x + 0.5 - cx,
            dy = y + 0.5 - cy;
          const shade = 1 + shadeU * (dx * cr + dy * sr) + shadeV * (dy * cr - dx * sr);
          R += (fg[0] * shade - R) * cov;
          G += (fg[1] * shade - G) * cov;
          B += (fg[2] * shade - B) * cov;
        }
      }
      const n = ((noise.next() & 0xff) - 127.5) * noiseAmp;
      rgb[o] = clampByte(R + n);
      rgb[o + 1] = clampByte(G + n);
      rgb[o + 2] = clampByte(B + n);
    }
  }
  return rgb;
}

/** Renders item `index` of the dataset `seed`. Pure: same arguments, same bytes, any runtime. */
export function renderSample(seed: number, index: number, opts: SyntheticSampleOptions = {}): SyntheticSample {
  const { width, height, classes } = resolve(opts);
  const label = labelFor(seed, index, classes);
  const rgb = draw(streamFor(seed, index, SALT_PIXELS), label, width, height);
  return { index, label, className: SHAPE_NAMES[label] ?? 'circle', rgb, width, height };
}

/** Items start..start+count-1 of dataset `seed`, rendered lazily. */
export function* renderDataset(
  seed: number,
  count: number,
  opts: SyntheticSampleOptions = {},
  start = 0,
): Generator<SyntheticSample, void, undefined> {
  for (let i = start; i < start + count; i++) yield renderSample(seed, i, opts);
}

// ---- Flat colour patches: a decoder test pattern whose exact colour is known at every pixel.

/** 16 colours, pairwise far apart in RGB and in YCbCr, including saturated primaries. */
const PATCH_COLOURS: readonly (readonly [number, number, number])[] = [
  [0, 0, 0],
  [255, 255, 255],
  [255, 0, 0],
  [0, 255, 0],
  [0, 0, 255],
  [255, 255, 0],
  [0, 255, 255],
  [255, 0, 255],
  [128, 128, 128],
  [255, 128, 0],
  [128, 0, 255],
  [0, 128, 64],
  [64, 32, 16],
  [192, 224, 255],
  [96, 160, 32],
  [200, 64, 120],
];

export interface PatchPattern {
  width: number;
  height: number;
  cols: number;
  rows: number;
  rgb: Uint8Array; // HWC RGB
  /** Exact colour of pixel (x, y). */
  colorAt(x: number, y: number): readonly [number, number, number];
  /** Pixels from (x, y) to the nearest block edge, 0 on an edge pixel: test only where this is large. */
  edgeDistance(x: number, y: number): number;
}

/** Colour of block i: the fixed table first, then hashed colours for grids over 16 blocks. */
function patchColour(i: number): readonly [number, number, number] {
  const c = PATCH_COLOURS[i];
  if (c) return c;
  const h = hash3(0xc0105, i);
  return [h & 0xff, (h >>> 8) & 0xff, (h >>> 16) & 0xff];
}

/**
 * An image of cols x rows flat blocks (block c spans x in [floor(c*W/cols), floor((c+1)*W/cols))).
 * Decoders can be checked against colorAt() within a tolerance away from edges, where chroma
 * subsampling, DCT ringing and resampling filters blur.
 */
export function solidPatches(width: number, height: number, cols = 4, rows = 4): PatchPattern {
  const start = (i: number, n: number, size: number): number => Math.floor((i * size) / n);
  const cell = (p: number, n: number, size: number): number => {
    let i = Math.min(n - 1, Math.floor((p * n) / size));
    while (i > 0 && p < start(i, n, size)) i--;
    while (i < n - 1 && p >= start(i + 1, n, size)) i++;
    return i;
  };
  const colorAt = (x: number, y: number) => patchColour(cell(y, rows, height) * cols + cell(x, cols, width));
  const edgeDistance = (x: number, y: number): number => {
    const c = cell(x, cols, width),
      r = cell(y, rows, height);
    return Math.min(
      x - start(c, cols, width),
      start(c + 1, cols, width) - 1 - x,
      y - start(r, rows, height),
      start(r + 1, rows, height) - 1 - y,
    );
  };
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0, o = 0; y < height; y++) {
    const rowBase = cell(y, rows, height) * cols;
    for (let c = 0; c < cols; c++) {
      const [r, g, b] = patchColour(rowBase + c);
      for (let x = start(c, cols, width); x < start(c + 1, cols, width); x++, o += 3) {
        rgb[o] = r;
        rgb[o + 1] = g;
        rgb[o + 2] = b;
      }
    }
  }
  return { width, height, cols, rows, rgb, colorAt, edgeDistance };
}
