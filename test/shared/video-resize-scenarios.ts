// Video frames resized by Tandem's own filter (wasm/src/resize.c, as JPEG images are) and converted
// with the stream's colour tags. The reference for the resize is test/shared/webcodecs-reference.ts
// (resize.c's filter in TypeScript, written for the WebCodecs frame pass) applied to the same
// frame decoded at its own size, where no resize happens. A frame shrunk by at least 2 on both axes
// is resized as YUV planes and converted at the target size (the plane road, wasm/src/image.c):
// within PLANE_ROAD_BOUND of that reference; any other reduced decode gives its bytes exactly. The
// colour reference is Debian's ffmpeg CLI on a BT.709-tagged clip.
import type { DecodePool } from '../../src/decode/index.ts';
import { colorTags, type VideoColorTags } from '../../src/decode/demux.ts';
import { assertEqual, check } from './assert.ts';
import { VIDEO_TOLERANCE } from './cli-reference-scenarios.ts';
import type { FixtureLoader } from './media-scenarios.ts';
import { referenceBytes } from './webcodecs-reference.ts';
import type { RgbaFrame } from './webcodecs-clips.ts';

const WIDTH = 160;
const HEIGHT = 120;
const FRAMES = [0, 7, 13];

type Fit = 'stretch' | 'cover' | 'contain';
interface Target {
  width: number;
  height: number;
  fit: Fit;
  crop?: { x: number; y: number; width: number; height: number };
  flip?: boolean;
  channels?: 1 | 3 | 4;
  padValue?: number;
  /** Colour, shrunk at least 2× on both axes (the 4:2:0 chroma shrinks too): the plane road. */
  planes?: true;
}

/**
 * How far the plane road may be from resize.c's filter on the own-size RGB frame, on the 0..255
 * scale: the mean difference per frame, the largest one, and the share of bytes off by more than
 * 24. Both roads convert with the same table arithmetic; they differ in where the 8-bit rounding
 * falls and in the chroma: the own-size road repeats each chroma sample over its pixels before the
 * filter, the plane road filters the chroma plane itself. Measured on these fixtures: means
 * 0.56–1.49, max 45 (at the sharp colour edges of testsrc2), at most 0.25% of bytes over 24.
 */
export const PLANE_ROAD_BOUND = { mean: 2, max: 56, over24: 0.005 };

/** Downscales, an upscale, odd sizes and offsets, crops, flips, padding, gray and RGBA. */
export const RESIZE_TARGETS: Target[] = [
  { width: 64, height: 48, fit: 'stretch', planes: true },
  { width: 40, height: 40, fit: 'cover', planes: true },
  { width: 40, height: 40, fit: 'cover', crop: { x: 11, y: 7, width: 101, height: 90 }, planes: true },
  { width: 33, height: 21, fit: 'stretch', flip: true, planes: true },
  { width: 112, height: 112, fit: 'cover' },
  { width: 200, height: 150, fit: 'stretch' },
  { width: 64, height: 64, fit: 'contain', padValue: 7, planes: true },
  { width: 48, height: 36, fit: 'cover', channels: 1 },
  { width: 48, height: 36, fit: 'stretch', channels: 4, planes: true },
];

async function decode(pool: DecodePool, bytes: Uint8Array, t: Target, frames: number[]): Promise<Uint8Array> {
  const channels = t.channels ?? 3;
  const slot = t.width * t.height * channels;
  const ptr = pool.malloc(slot * frames.length);
  try {
    const info = await pool.decodeVideo(bytes, ptr, {
      width: t.width,
      height: t.height,
      fit: t.fit,
      channels,
      ...(t.crop ? { crop: t.crop } : {}),
      ...(t.flip ? { flip: true } : {}),
      ...(t.padValue !== undefined ? { padValue: t.padValue } : {}),
      frames: { indices: frames },
    });
    check(info.framesWritten === frames.length, `${info.framesWritten} of ${frames.length} frames written`);
    return new Uint8Array(pool.memory.buffer, ptr, slot * frames.length).slice();
  } finally {
    pool.free(ptr);
  }
}

/** Own-size decodes (no resize) as RGBA frames for the reference; gray replicated into R, G and B. */
function asRgba(pixels: Uint8Array, channels: number, index: number): RgbaFrame {
  const n = WIDTH * HEIGHT;
  const rgba = new Uint8Array(n * 4);
  for (let p = 0; p < n; p++)
    for (let c = 0; c < 4; c++) rgba[p * 4 + c] = c === 3 ? 255 : (pixels[(index * n + p) * channels + (channels === 1 ? 0 : c)] as number);
  return { timestampUs: 0, width: WIDTH, height: HEIGHT, rgba };
}

/** What the slot must hold: the reference resize, placed (contain) and widened to the slot's channels. */
function expected(frame: RgbaFrame, t: Target): Uint8Array {
  const channels = t.channels ?? 3;
  let inner = { x: 0, y: 0, w: t.width, h: t.height };
  if (t.fit === 'contain') {
    const s = Math.min(t.width / WIDTH, t.height / HEIGHT);
    const w = Math.max(1, Math.floor(WIDTH * s + 0.5));
    const h = Math.max(1, Math.floor(HEIGHT * s + 0.5));
    inner = { x: Math.floor((t.width - w) / 2), y: Math.floor((t.height - h) / 2), w, h };
  }
  const rgb = referenceBytes(frame, {
    width: inner.w,
    height: inner.h,
    fit: t.fit === 'contain' ? 'stretch' : t.fit,
    ...(t.crop ? { crop: t.crop } : {}),
    flip: false,
  });
  const out = new Uint8Array(t.width * t.height * channels).fill(t.padValue ?? 0);
  for (let y = 0; y < inner.h; y++)
    for (let x = 0; x < inner.w; x++)
      for (let c = 0; c < channels; c++) {
        const xo = t.flip ? t.width - 1 - (inner.x + x) : inner.x + x;
        out[((inner.y + y) * t.width + xo) * channels + c] =
          c === 3 ? 255 : (rgb[(y * inner.w + x) * 3 + (channels === 1 ? 0 : c)] as number);
      }
  return out;
}

export async function reducedVideoDecodesEqualResizeOfOwnSize(pool: DecodePool, load: FixtureLoader): Promise<string[]> {
  const checked: string[] = [];
  for (const file of ['testsrc.h264.mp4', 'testsrc.vp9.webm']) {
    const bytes = await load(file);
    const own = { 1: await decode(pool, bytes, { width: WIDTH, height: HEIGHT, fit: 'stretch', channels: 1 }, FRAMES) };
    const rgb = await decode(pool, bytes, { width: WIDTH, height: HEIGHT, fit: 'stretch' }, FRAMES);
    for (const t of RESIZE_TARGETS) {
      const got = await decode(pool, bytes, t, FRAMES);
      const channels = t.channels ?? 3;
      const slot = t.width * t.height * channels;
      FRAMES.forEach((index, i) => {
        const want = expected(channels === 1 ? asRgba(own[1], 1, i) : asRgba(rgb, 3, i), t);
        const slotBytes = got.subarray(i * slot, (i + 1) * slot);
        let differing = 0;
        let worst = 0;
        let sum = 0;
        let over24 = 0;
        for (let k = 0; k < slot; k++) {
          const d = Math.abs((slotBytes[k] as number) - (want[k] as number));
          if (d) differing++;
          if (d > 24) over24++;
          sum += d;
          worst = Math.max(worst, d);
        }
        const name = `${file} frame ${index} → ${t.width}×${t.height} ${t.fit}${t.crop ? ' crop' : ''}${t.flip ? ' flip' : ''} ×${channels}`;
        if (!t.planes) {
          check(
            differing === 0,
            `${name}: ${differing} of ${slot} bytes differ from resize.c's filter on the own-size frame (max ${worst})`,
          );
          return;
        }
        const b = PLANE_ROAD_BOUND;
        check(
          sum / slot <= b.mean && worst <= b.max && over24 / slot <= b.over24,
          `${name} (plane road): mean ${(sum / slot).toFixed(3)}, max ${worst}, ${over24} bytes off by more than 24, against ${JSON.stringify(b)}`,
        );
        // Not the own-size road in disguise (measured: a quarter to two fifths of the bytes differ).
        check(differing > slot / 8, `${name}: only ${differing} of ${slot} bytes differ: the plane road was not taken`);
      });
      checked.push(`${file} ${t.width}×${t.height} ${t.fit}`);
    }
  }
  return checked;
}

/**
 * The plane road converts with swscale's table arithmetic to the bit: a solid red, green and blue
 * frame (its planes uniform, so every resize of them gives the same Y, U and V) shrunk 4× by the
 * plane road holds, in every pixel, the own-size road's colour, as RGB and as RGBA. The
 * precondition is checked: each own-size frame is one colour.
 */
export async function planeRoadConvertsAsSwscale(pool: DecodePool, load: FixtureLoader): Promise<void> {
  for (const file of ['rgb.h264.mp4', 'rgb.vp9.webm']) {
    const bytes = await load(file);
    for (const channels of [3, 4] as const) {
      const frames = [5, 15, 25];
      const own = await decode(pool, bytes, { width: 64, height: 48, fit: 'stretch', channels }, frames);
      const small = await decode(pool, bytes, { width: 16, height: 12, fit: 'stretch', channels, planes: true }, frames);
      frames.forEach((index, i) => {
        const ownFrame = own.subarray(i * 64 * 48 * channels, (i + 1) * 64 * 48 * channels);
        const colour = Array.from(ownFrame.subarray(0, channels));
        const uniform = ownFrame.every((v, k) => v === colour[k % channels]);
        check(uniform, `${file} frame ${index}: the own-size frame is not one colour (${colour})`);
        const smallFrame = small.subarray(i * 16 * 12 * channels, (i + 1) * 16 * 12 * channels);
        const off = smallFrame.findIndex((v, k) => v !== colour[k % channels]);
        check(off < 0, `${file} frame ${index} ×${channels}: byte ${off} is ${smallFrame[off]}, the own-size colour is ${colour}`);
      });
    }
  }
}

/** Other filters keep libswscale: bicubic must not give the bilinear reference's bytes. */
export async function otherFiltersKeepSwscale(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const bytes = await load('testsrc.h264.mp4');
  const rgb = await decode(pool, bytes, { width: WIDTH, height: HEIGHT, fit: 'stretch' }, [0]);
  const ptr = pool.malloc(64 * 48 * 3);
  try {
    await pool.decodeVideo(bytes, ptr, { width: 64, height: 48, fit: 'stretch', filter: 'bicubic', frames: { indices: [0] } });
    const got = new Uint8Array(pool.memory.buffer, ptr, 64 * 48 * 3);
    const want = expected(asRgba(rgb, 3, 0), { width: 64, height: 48, fit: 'stretch' });
    let differing = 0;
    for (let k = 0; k < want.length; k++) if (got[k] !== want[k]) differing++;
    check(differing > want.length / 10, `bicubic gave the bilinear reference's bytes (${differing} differ)`);
  } finally {
    pool.free(ptr);
  }
}

function stats(got: Uint8Array, want: Uint8Array): { mean: number; max: number } {
  let sum = 0;
  let max = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs((got[i] as number) - (want[i] as number));
    sum += d;
    max = Math.max(max, d);
  }
  return { mean: sum / want.length, max };
}

/** A BT.709-tagged clip against ffmpeg's CLI (which honours the tag), at the clip's own size. */
export async function bt709ClipMatchesFfmpegCli(pool: DecodePool, load: FixtureLoader): Promise<string> {
  const file = 'testsrc.bt709.h264.mp4';
  const want = await load(`${file}.rgb`);
  const frames = want.length / (WIDTH * HEIGHT * 3);
  const got = await decode(
    pool,
    await load(file),
    { width: WIDTH, height: HEIGHT, fit: 'stretch' },
    Array.from({ length: frames }, (_, i) => i),
  );
  const s = stats(got, want);
  check(
    s.mean <= VIDEO_TOLERANCE.mean && s.max <= VIDEO_TOLERANCE.max,
    `${file} against ffmpeg's CLI: mean ${s.mean.toFixed(3)}, max ${s.max}`,
  );
  return `${file}: mean ${s.mean.toFixed(3)}, max ${s.max}`;
}

const BT709: VideoColorTags = { matrix: 'bt709', primaries: 'bt709', transfer: 'bt709', fullRange: false };

/** The demux job's colour tags: ffprobe's view of the fixtures (scripts/make-fixtures.sh). */
export async function demuxReportsColourTags(pool: DecodePool, load: FixtureLoader): Promise<void> {
  const tagged = await pool.demuxVideo(await load('testsrc.bt709.h264.mp4'), { packets: false });
  assertEqual(tagged.colorSpace, BT709, 'testsrc.bt709.h264.mp4 colour tags');
  const untagged = await pool.demuxVideo(await load('testsrc.h264.mp4'), { packets: false });
  check(untagged.colorSpace === undefined, `testsrc.h264.mp4 is untagged, got ${JSON.stringify(untagged.colorSpace)}`);
  // libvpx writes the range (limited) into the WebM, nothing else.
  const vp9 = await pool.demuxVideo(await load('testsrc.vp9.webm'), { packets: false });
  assertEqual(
    vp9.colorSpace,
    { matrix: undefined, primaries: undefined, transfer: undefined, fullRange: false },
    'testsrc.vp9.webm colour tags',
  );
}

/** libavutil's enum values to WebCodecs' names, and what has no name. */
export function colourTagNames(): void {
  check(colorTags(2, 0, 2, 2) === undefined, 'all unspecified is no tag');
  assertEqual(colorTags(1, 1, 1, 1), BT709, 'BT.709 limited');
  assertEqual(
    colorTags(6, 2, 6, 6),
    { matrix: 'smpte170m', primaries: 'smpte170m', transfer: 'smpte170m', fullRange: true },
    'SMPTE 170M full range',
  );
  assertEqual(colorTags(9, 1, 9, 16), { matrix: 'bt2020-ncl', primaries: 'bt2020', transfer: 'pq', fullRange: false }, 'BT.2020 PQ');
  assertEqual(
    colorTags(5, 0, 5, 13),
    { matrix: 'bt470bg', primaries: 'bt470bg', transfer: 'iec61966-2-1', fullRange: undefined },
    'BT.470BG sRGB',
  );
  // FCC (4), SMPTE 240M (7) and BT.2020 constant luminance (10) have no WebCodecs name.
  assertEqual(colorTags(4, 1, 2, 2), { matrix: undefined, primaries: undefined, transfer: undefined, fullRange: false }, 'FCC');
  assertEqual(
    colorTags(10, 0, 2, 18),
    { matrix: undefined, primaries: undefined, transfer: 'hlg', fullRange: undefined },
    'BT.2020 CL, HLG',
  );
}

/** Every check above on one pool, in order: the Deno tier runs them as one test per pool mode. */
export async function allVideoResizeChecks(pool: DecodePool, load: FixtureLoader): Promise<void> {
  await reducedVideoDecodesEqualResizeOfOwnSize(pool, load);
  await planeRoadConvertsAsSwscale(pool, load);
  await otherFiltersKeepSwscale(pool, load);
  await bt709ClipMatchesFfmpegCli(pool, load);
  await demuxReportsColourTags(pool, load);
  colourTagNames();
}
