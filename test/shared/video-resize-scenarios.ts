// Video frames resized by Tandem's own filter (wasm/src/resize.c, as JPEG images are) and converted
// with the stream's colour tags. The reference for the resize is test/shared/webcodecs-reference.ts
// (resize.c's filter in TypeScript, written for the WebCodecs frame pass) applied to the same
// frame decoded at its own size, where no resize happens: a reduced decode must give its bytes
// exactly. The colour reference is Debian's ffmpeg CLI on a BT.709-tagged clip.
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
}

/** Downscales, an upscale, odd sizes and offsets, crops, flips, padding, gray and RGBA. */
export const RESIZE_TARGETS: Target[] = [
  { width: 64, height: 48, fit: 'stretch' },
  { width: 40, height: 40, fit: 'cover' },
  { width: 40, height: 40, fit: 'cover', crop: { x: 11, y: 7, width: 101, height: 90 } },
  { width: 33, height: 21, fit: 'stretch', flip: true },
  { width: 112, height: 112, fit: 'cover' },
  { width: 200, height: 150, fit: 'stretch' },
  { width: 64, height: 64, fit: 'contain', padValue: 7 },
  { width: 48, height: 36, fit: 'cover', channels: 1 },
  { width: 48, height: 36, fit: 'stretch', channels: 4 },
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
        for (let k = 0; k < slot; k++) {
          const d = Math.abs((slotBytes[k] as number) - (want[k] as number));
          if (d) differing++;
          worst = Math.max(worst, d);
        }
        const name = `${file} frame ${index} → ${t.width}×${t.height} ${t.fit}${t.crop ? ' crop' : ''}${t.flip ? ' flip' : ''} ×${channels}`;
        check(differing === 0, `${name}: ${differing} of ${slot} bytes differ from resize.c's filter on the own-size frame (max ${worst})`);
      });
      checked.push(`${file} ${t.width}×${t.height} ${t.fit}`);
    }
  }
  return checked;
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
  await otherFiltersKeepSwscale(pool, load);
  await bt709ClipMatchesFfmpegCli(pool, load);
  await demuxReportsColourTags(pool, load);
  colourTagNames();
}
