// Formats the project's own encoders do not write (progressive and CMYK JPEG, lossy, lossless and
// alpha WebP, animated GIF), made by Debian's PIL (scripts/make-image-fixtures.py). Each decode
// is checked against the pixels the file was made from and against PIL's own decode of the file.
import type { DecodePool } from '../../src/decode/index.ts';
import { check } from './assert.ts';
import type { FixtureLoader } from './media-scenarios.ts';

const W = 97;
const H = 61;

export interface Limits {
  mean: number;
  /** Largest error allowed on any sample. */
  max: number;
  /** Share of samples allowed an error over OUTLIER (chroma-subsampled edges, where decoders differ). */
  outliers?: number;
}

const OUTLIER = 24;

interface FormatCase {
  file: string;
  format: string;
  channels: 3 | 4;
  /** Against the source pixels (absent for GIF: its palette is PIL's quantisation). */
  source?: Limits;
  /** Against PIL's decode (libjpeg-turbo, libwebp, PIL's GIF reader). */
  native: Limits;
}

export const EXACT: Limits = { mean: 0, max: 0 };
/**
 * 4:4:4 JPEG against PIL: both sides are libjpeg-turbo 2.1.5 (Tandem's wasm SIMD IDCT and colour
 * conversion are bit-exact with its C), so any difference, even one level, is a regression.
 */
const FULL_CHROMA: Limits = EXACT;
/** 4:4:4 JPEG at quality 92+ against the pixels it was made from: ringing at sharp edges. */
const FULL_CHROMA_LOSS: Limits = { mean: 2, max: 48, outliers: 0.005 };
/**
 * 4:2:0 (JPEG, lossy WebP): decoders upsample chroma differently, which shows only on a few
 * samples along sharp colour edges (up to ~150 levels there); everywhere else they agree.
 */
const HALF_CHROMA: Limits = { mean: 4, max: 255, outliers: 0.04 };

const CASES: readonly FormatCase[] = [
  { file: 'progressive.jpg', format: 'jpeg', channels: 3, source: FULL_CHROMA_LOSS, native: FULL_CHROMA },
  { file: 'progressive-420.jpg', format: 'jpeg', channels: 3, source: HALF_CHROMA, native: HALF_CHROMA },
  { file: 'cmyk.jpg', format: 'jpeg', channels: 3, source: FULL_CHROMA_LOSS, native: FULL_CHROMA },
  { file: 'cmyk-ink.jpg', format: 'jpeg', channels: 3, source: FULL_CHROMA_LOSS, native: FULL_CHROMA },
  { file: 'lossy.webp', format: 'webp', channels: 3, source: HALF_CHROMA, native: HALF_CHROMA },
  { file: 'lossless.webp', format: 'webp', channels: 3, source: EXACT, native: EXACT },
  { file: 'alpha.webp', format: 'webp', channels: 4, source: EXACT, native: EXACT },
  { file: 'three-frames.gif', format: 'gif', channels: 3, native: EXACT },
];

export function compare(got: Uint8Array, want: Uint8Array, limits: Limits, what: string): void {
  check(got.length === want.length, `${what}: ${got.length} bytes, reference has ${want.length}`);
  let sum = 0;
  let worst = 0;
  let outliers = 0;
  for (let i = 0; i < got.length; i++) {
    const d = Math.abs((got[i] ?? 0) - (want[i] ?? 0));
    sum += d;
    if (d > worst) worst = d;
    if (d > OUTLIER) outliers++;
  }
  const mean = sum / got.length;
  const share = outliers / got.length;
  check(
    mean <= limits.mean && worst <= limits.max && share <= (limits.outliers ?? 0),
    `${what}: mean error ${mean.toFixed(2)} (limit ${limits.mean}), max ${worst} (limit ${limits.max}), ` +
      `${(share * 100).toFixed(2)}% over ${OUTLIER} (limit ${((limits.outliers ?? 0) * 100).toFixed(0)}%)`,
  );
}

/** Every case decodes at its own size (no resampling) to pixels within its limits. */
export async function imageFormatsMatchReferences(pool: DecodePool, load: FixtureLoader): Promise<string[]> {
  const target = pool.malloc(W * H * 4);
  const checked: string[] = [];
  try {
    for (const c of CASES) {
      const ext = c.channels === 4 ? 'rgba' : 'rgb';
      const info = await pool.decodeInto(await load(c.file), target, { width: W, height: H, channels: c.channels, fit: 'stretch' });
      check(info.format === c.format, `${c.file}: format ${info.format}, expected ${c.format}`);
      check(info.sourceWidth === W && info.sourceHeight === H, `${c.file}: source ${info.sourceWidth}x${info.sourceHeight}`);
      const got = new Uint8Array(pool.memory.buffer, target, W * H * c.channels).slice();
      compare(got, await load(`${c.file}.pil.${ext}`), c.native, `${c.file} against PIL`);
      if (c.source) compare(got, await load(`${c.file}.src.${ext}`), c.source, `${c.file} against its source`);
      if (c.format === 'gif') {
        // The first frame, not a later one: frames differ in a block's colour.
        const second = await load(`${c.file}.second.rgb`);
        check(
          got.some((v, i) => v !== second[i]),
          `${c.file}: decoded the second frame`,
        );
      }
      checked.push(c.file);
    }
  } finally {
    pool.free(target);
  }
  return checked;
}

/**
 * Resize(224) + CenterCrop(224) as torchvision does it on PIL images, against PIL itself: a full
 * decode lands exactly on it (the same libjpeg-turbo decode, the same antialiased bilinear filter,
 * rounding and crop geometry: measured mean 0, max 0); the default, decoding at a reduced
 * DCT scale first, within 1.5× the figures measured and documented (REDUCED_MEASURED). Returns the
 * measured errors.
 */
export async function coverMatchesTorchvision(
  pool: DecodePool,
  load: FixtureLoader,
  limits: { full: Limits; reduced?: Limits } = { full: EXACT },
): Promise<string[]> {
  const size = 224 * 224 * 3;
  const target = pool.malloc(size);
  const measured: string[] = [];
  try {
    for (const file of ['photo-landscape.jpg', 'photo-portrait.jpg']) {
      const want = await load(`${file}.tv224.rgb`);
      for (const reducedScale of [false, true]) {
        const info = await pool.decodeInto(await load(file), target, { width: 224, height: 224, fit: 'cover', reducedScale });
        check(reducedScale ? info.reducedScale > 1 : info.reducedScale === 1, `${file}: reduced scale ${info.reducedScale}`);
        const got = new Uint8Array(pool.memory.buffer, target, size).slice();
        const what = `${file} (${reducedScale ? `decoded at 1/${info.reducedScale}` : 'full decode'}) against torchvision`;
        measured.push(`${what}: ${stats(got, want)}`);
        compare(got, want, reducedScale ? (limits.reduced ?? reducedLimits(`${file} cover`)) : limits.full, what);
      }
    }
  } finally {
    pool.free(target);
  }
  return measured;
}

export function stats(got: Uint8Array, want: Uint8Array): string {
  let sum = 0;
  let worst = 0;
  let outliers = 0;
  for (let i = 0; i < got.length; i++) {
    const d = Math.abs((got[i] ?? 0) - (want[i] ?? 0));
    sum += d;
    worst = Math.max(worst, d);
    if (d > OUTLIER) outliers++;
  }
  return `mean ${(sum / got.length).toFixed(3)}, max ${worst}, ${((100 * outliers) / got.length).toFixed(2)}% over ${OUTLIER}`;
}

/**
 * The reduced-scale decodes' errors against torchvision on PIL, as measured and written in
 * docs/decode.md; a test allows at most 1.5× each figure, so a drift past that fails.
 */
export const REDUCED_MEASURED: Readonly<Record<string, { mean: number; max: number; outliers: number }>> = {
  'photo-landscape.jpg cover': { mean: 5.45, max: 66, outliers: 0.049 },
  'photo-portrait.jpg cover': { mean: 4.35, max: 58, outliers: 0.0284 },
  'photo-landscape.jpg crop seed 1': { mean: 3.84, max: 71, outliers: 0.0262 },
  'photo-landscape.jpg crop seed 6': { mean: 4.47, max: 95, outliers: 0.0298 },
};

export function reducedLimits(key: string): Limits {
  const measured = REDUCED_MEASURED[key];
  check(measured, `no documented reduced-scale figure for ${key}`);
  return { mean: 1.5 * measured.mean, max: Math.round(1.5 * measured.max), outliers: 1.5 * measured.outliers };
}
