// Synthetic labelled videos: one shape gliding over a still, mildly textured background with fresh
// noise in every frame. The class is the direction of motion, so one frame tells nothing about it
// and two frames do: the shape, its colour, size and speed are drawn independently of the class,
// and it moves on a torus (leaving one edge, it comes back at the opposite one), which makes its
// position in any single frame uniform over the picture whatever the class.
//
// Only + − × ÷ and sqrt (all correctly rounded in IEEE arithmetic) touch the pixels, so the bytes
// are the same in every JS engine.

import { type Rng, mix32, streamFor } from '../random/index.ts';
import { labelFor } from './shapes.ts';

/** Class names in label order: the direction the shape moves in (x grows to the right, y downwards). */
export const MOTION_NAMES = ['right', 'left', 'down', 'up'] as const;
export type MotionName = (typeof MOTION_NAMES)[number];
const DIRECTIONS: readonly (readonly [number, number])[] = [
  [1, 0],
  [-1, 0],
  [0, 1],
  [0, -1],
];

export interface MovingSampleOptions {
  width?: number; // default 64 x 64, 16 frames
  height?: number;
  frames?: number;
}

export interface MovingSample {
  index: number;
  label: number;
  className: MotionName;
  /** `frames` RGB frames one after the other, each HWC, 8 bits per channel, no row padding. */
  rgb: Uint8Array;
  width: number;
  height: number;
  frames: number;
  /** The shape's centre in each frame, (x, y) pairs in pixels, wrapped into the picture. */
  centres: Float64Array;
  /** Pixels per frame along the direction of motion. */
  speed: number;
}

const SALT_LABEL = 0x6d6f7665,
  SALT_PIXELS = 0x6d76706c;
const MAX_BYTES = 1 << 30;

function resolve(opts: MovingSampleOptions): Required<MovingSampleOptions> {
  const { width = 64, height = 64, frames = 16 } = opts;
  const int = (n: number, lo: number, hi: number): boolean => Number.isInteger(n) && n >= lo && n <= hi;
  if (!int(width, 16, 4096) || !int(height, 16, 4096)) throw new RangeError(`moving shapes: bad size ${width}x${height} (16 … 4096)`);
  if (!int(frames, 2, 4096) || width * height * 3 * frames > MAX_BYTES)
    throw new RangeError(`moving shapes: ${frames} frames of ${width}x${height} is not 2 … 4096 frames within 1 GiB`);
  return { width, height, frames };
}

/** Label of video `index`: blocks of four are seeded permutations of the classes, so any prefix is balanced within one. */
export function motionLabelFor(seed: number, index: number): number {
  return labelFor(mix32((seed >>> 0) ^ SALT_LABEL), index, MOTION_NAMES.length);
}

// Shapes as inside-tests in unit coordinates, each inside the unit disc.
type Inside = (u: number, v: number) => boolean;
const SHAPES: readonly Inside[] = [
  (u, v) => u * u + v * v <= 1,
  (u, v) => (u < 0 ? -u : u) <= 0.72 && (v < 0 ? -v : v) <= 0.72,
  (u, v) => v >= -0.5 && v <= 1 - 1.732 * (u < 0 ? -u : u),
  (u, v) => (u < 0 ? -u : u) + (v < 0 ? -v : v) <= 1,
  (u, v) => {
    const au = u < 0 ? -u : u,
      av = v < 0 ? -v : v;
    return (au <= 0.3 && av <= 0.95) || (av <= 0.3 && au <= 0.95);
  },
];

/** HSV (in [0, 1], hue wraps) to RGB in [0, 255]. */
function hsv(h: number, s: number, v: number): [number, number, number] {
  const hh = (h - Math.floor(h)) * 6;
  const i = Math.floor(hh),
    f = hh - i;
  const p = v * (1 - s),
    q = v * (1 - s * f),
    t = v * (1 - s * (1 - f));
  const rgb = i === 0 ? [v, t, p] : i === 1 ? [q, v, p] : i === 2 ? [p, v, t] : i === 3 ? [p, q, v] : i === 4 ? [t, p, v] : [v, p, q];
  return [(rgb[0] ?? 0) * 255, (rgb[1] ?? 0) * 255, (rgb[2] ?? 0) * 255];
}

/** A random unit vector by rejection from the square: no trigonometry, so no engine differences. */
function unitVector(rng: Rng): [number, number] {
  for (;;) {
    const u = rng.range(-1, 1),
      v = rng.range(-1, 1);
    const d2 = u * u + v * v;
    if (d2 > 0.01 && d2 <= 1) {
      const d = Math.sqrt(d2);
      return [u / d, v / d];
    }
  }
}

const clampByte = (x: number): number => (x <= 0 ? 0 : x >= 255 ? 255 : (x + 0.5) | 0);
/** Triangle wave of period 1 in [−1, 1]. */
const triangle = (x: number): number => 4 * Math.abs(x - Math.floor(x) - 0.5) - 1;

/** The still background: a two-colour gradient with soft stripes, as floats (HWC). */
function background(rng: Rng, w: number, h: number, bgA: readonly number[], bgB: readonly number[]): Float64Array {
  const [gx, gy] = unitVector(rng);
  const [sx, sy] = unitVector(rng);
  const period = rng.range(6, 20),
    phase = rng.float(),
    amplitude = rng.range(3, 8);
  const span = Math.sqrt(w * w + h * h);
  const out = new Float64Array(w * h * 3);
  for (let y = 0, o = 0; y < h; y++) {
    for (let x = 0; x < w; x++, o += 3) {
      const t = 0.5 + ((x - w / 2) * gx + (y - h / 2) * gy) / span;
      const stripe = amplitude * triangle((x * sx + y * sy) / period + phase);
      for (let c = 0; c < 3; c++) out[o + c] = (bgA[c] ?? 0) + ((bgB[c] ?? 0) - (bgA[c] ?? 0)) * t + stripe;
    }
  }
  return out;
}

function draw(rng: Rng, label: number, w: number, h: number, frames: number): { rgb: Uint8Array; centres: Float64Array; speed: number } {
  const hue = rng.float();
  const bgV = rng.range(0.3, 0.85);
  // Brightness contrast of at least 0.3 in value, as in the still shapes.
  const fgV = bgV > 0.575 ? bgV - rng.range(0.3, 0.45) : bgV + rng.range(0.3, 0.45);
  const bgA = hsv(hue, rng.range(0.15, 0.6), bgV);
  const bgB = hsv(hue + rng.range(-0.1, 0.1), rng.range(0.15, 0.6), bgV + rng.range(-0.08, 0.08));
  const fg = hsv(hue + rng.range(0.25, 0.75), rng.range(0.3, 0.9), fgV);
  const short = w < h ? w : h;
  const r = short * rng.range(0.1, 0.18);
  const speed = (short / 64) * rng.range(1, 3);
  const x0 = rng.range(0, w),
    y0 = rng.range(0, h);
  const [rc, rs] = unitVector(rng); // rotation
  const inside: Inside = SHAPES[rng.int(SHAPES.length)] ?? ((u, v) => u * u + v * v <= 1);
  const noiseAmp = rng.range(2, 5) / 127.5;
  const bg = background(rng.fork(1), w, h, bgA, bgB);
  const noise = rng.fork(2);
  const [dx, dy] = DIRECTIONS[label] ?? [1, 0];

  const frameBytes = w * h * 3;
  const rgb = new Uint8Array(frameBytes * frames);
  const centres = new Float64Array(frames * 2);
  const frame = new Float64Array(frameBytes);
  const cr = rc / r,
    sr = rs / r;
  for (let k = 0; k < frames; k++) {
    frame.set(bg);
    const cx = x0 + dx * speed * k,
      cy = y0 + dy * speed * k;
    centres[2 * k] = cx - Math.floor(cx / w) * w;
    centres[2 * k + 1] = cy - Math.floor(cy / h) * h;
    // Walk the shape's box in unwrapped coordinates and write each pixel where it wraps to.
    for (let py = Math.floor(cy - r) - 1; py <= Math.ceil(cy + r) + 1; py++) {
      const wy = py - Math.floor(py / h) * h;
      for (let px = Math.floor(cx - r) - 1; px <= Math.ceil(cx + r) + 1; px++) {
        let hits = 0;
        for (let oy = 0.25; oy < 1; oy += 0.5) {
          for (let ox = 0.25; ox < 1; ox += 0.5) {
            const ux = px + ox - cx,
              uy = py + oy - cy;
            if (inside(ux * cr + uy * sr, uy * cr - ux * sr)) hits++;
          }
        }
        if (hits === 0) continue;
        const o = (wy * w + (px - Math.floor(px / w) * w)) * 3;
        const cov = hits / 4;
        for (let c = 0; c < 3; c++) frame[o + c] = (frame[o + c] ?? 0) + ((fg[c] ?? 0) - (frame[o + c] ?? 0)) * cov;
      }
    }
    const base = k * frameBytes;
    for (let o = 0; o < frameBytes; o += 3) {
      const n = ((noise.next() & 0xff) - 127.5) * noiseAmp;
      rgb[base + o] = clampByte((frame[o] ?? 0) + n);
      rgb[base + o + 1] = clampByte((frame[o + 1] ?? 0) + n);
      rgb[base + o + 2] = clampByte((frame[o + 2] ?? 0) + n);
    }
  }
  return { rgb, centres, speed };
}

/** Renders video `index` of the dataset `seed`. Pure: same arguments, same bytes, any runtime. */
export function renderMovingSample(seed: number, index: number, opts: MovingSampleOptions = {}): MovingSample {
  const { width, height, frames } = resolve(opts);
  const label = motionLabelFor(seed, index);
  const { rgb, centres, speed } = draw(streamFor(seed, index, SALT_PIXELS), label, width, height, frames);
  return { index, label, className: MOTION_NAMES[label] ?? 'right', rgb, width, height, frames, centres, speed };
}

/** Frame `k` of a rendered video, as a view (HWC RGB). */
export function movingFrame(sample: MovingSample, k: number): Uint8Array {
  if (!Number.isInteger(k) || k < 0 || k >= sample.frames) throw new RangeError(`movingFrame: frame ${k} is not 0 … ${sample.frames - 1}`);
  const bytes = sample.width * sample.height * 3;
  return sample.rgb.subarray(k * bytes, (k + 1) * bytes);
}

/** Videos start … start + count − 1 of dataset `seed`, rendered lazily. */
export function* renderMovingDataset(
  seed: number,
  count: number,
  opts: MovingSampleOptions = {},
  start = 0,
): Generator<MovingSample, void, undefined> {
  for (let i = start; i < start + count; i++) yield renderMovingSample(seed, i, opts);
}
