// The bench's two corpora and each video's one clip:
//   - the moving-shapes fixtures (scripts/make-fixtures.sh): H.264, 64×64, 16 frames at 8 fps;
//   - made here with Debian's ffmpeg CLI and cached: H.264 320×240, 10 s at 30 fps, a keyframe
//     every 2 s, from lavfi sources that differ per file (testsrc2 with its hue turned and seeded noise, mandelbrot
//     zooms, seeded life in 4-pixel cells), so that decoding, not file handling, is the cost.
// The clip of each video (the sampler's frame times) is worked out once here with Tandem's
// demuxer and sampleClips, and handed to every column, so each decodes the same frames.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { DecodePool } from '../../src/decode/index.ts';
import { cacheDir, exists, makeDir } from '../../src/runtime/index.ts';
import { sampleClips } from '../../src/video/index.ts';
import { CLIP, type ClipPlan } from './types.ts';

export interface BenchVideo {
  path: string;
  bytes: Uint8Array;
  label: number;
  key: string;
}

export interface Corpus {
  name: string;
  /** A short id for URLs and result keys. */
  id: string;
  description: string;
  videos: BenchVideo[];
  plans: ClipPlan[];
}

const root = new URL('../../', import.meta.url).pathname;
export const SHAPES_DIR = `${root}test/fixtures/generated/moving-shapes`;
export const LARGE = { width: 320, height: 240, seconds: 10, fps: 30, keyframeSeconds: 2 } as const;
const LARGE_DIR = `${cacheDir()}/bench/video-h264-${LARGE.width}x${LARGE.height}-${LARGE.seconds}s-${LARGE.fps}fps-g${LARGE.keyframeSeconds * LARGE.fps}-v3`;

/** The lavfi source of large file `i`: three kinds in turn, each with its own seed or view. */
export function largeSource(i: number): { kind: string; filter: string } {
  const { width: w, height: h, seconds, fps } = LARGE;
  const size = `size=${w}x${h}:rate=${fps}`;
  switch (i % 3) {
    case 0:
      return {
        kind: 'testsrc2, hue turned, seeded noise',
        filter: `testsrc2=${size}:duration=${seconds},hue=h=${(i * 47) % 360},noise=alls=${8 + (i % 7) * 2}:allf=t:all_seed=${i + 1}`,
      };
    case 1:
      return {
        kind: 'mandelbrot',
        filter: `mandelbrot=${size}:maxiter=256:start_scale=${(1.5 + (i % 5) * 0.5).toFixed(1)}:end_scale=0.05:start_x=${(-0.75 + (i % 4) * 0.01).toFixed(2)},trim=duration=${seconds}`,
      };
    default:
      // Cells of 4 pixels, softened: with 1-pixel cells the resize filters, not the decoders, would set the pixels apart.
      return {
        kind: 'life',
        filter: `life=size=${w / 4}x${h / 4}:rate=${fps}:seed=${i + 1}:mold=10:ratio=${(0.2 + (i % 4) * 0.05).toFixed(2)},scale=${w}:${h}:flags=bicubic,format=yuv420p,trim=duration=${seconds}`,
      };
  }
}

/** The first `count` large files, made where missing (a file appears only once ffmpeg finished it). */
export async function largeVideos(count: number, log: (s: string) => void): Promise<BenchVideo[]> {
  await makeDir(LARGE_DIR);
  const out: BenchVideo[] = [];
  for (let i = 0; i < count; i++) {
    const path = `${LARGE_DIR}/${String(i).padStart(3, '0')}.mp4`;
    if (!(await exists(path))) {
      const { filter } = largeSource(i);
      const partial = `${path}.partial.mp4`;
      const g = String(LARGE.keyframeSeconds * LARGE.fps);
      const r = spawnSync(
        'ffmpeg',
        ['-v', 'error', '-y', '-f', 'lavfi', '-i', filter, '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p'].concat([
          '-g',
          g,
          '-keyint_min',
          g,
          '-sc_threshold',
          '0',
          '-movflags',
          '+faststart',
          partial,
        ]),
        { encoding: 'utf8' },
      );
      if (r.status !== 0) throw new Error(`ffmpeg could not make ${path}: ${r.error?.message ?? r.stderr}`);
      renameSync(partial, path);
      log(`made ${path}`);
    }
    out.push({ path, bytes: new Uint8Array(readFileSync(path)), label: i % 3, key: `large/${i}` });
  }
  return out;
}

/** The first `count` moving-shapes videos, classes in name order, files in numeric order, interleaved by class. */
export function shapesVideos(count: number): BenchVideo[] {
  let classes: string[];
  try {
    classes = readdirSync(SHAPES_DIR, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
  } catch {
    throw new Error(`${SHAPES_DIR} is missing: run bash scripts/make-fixtures.sh`);
  }
  const perClass = classes.map((c) =>
    readdirSync(join(SHAPES_DIR, c))
      .filter((f) => f.endsWith('.mp4'))
      .sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10))
      .map((f) => join(SHAPES_DIR, c, f)),
  );
  const out: BenchVideo[] = [];
  for (let k = 0; out.length < count && perClass.some((files) => k < files.length); k++)
    perClass.forEach((files, label) => {
      const path = files[k];
      if (path && out.length < count)
        out.push({ path, bytes: new Uint8Array(readFileSync(path)), label, key: path.slice(SHAPES_DIR.length + 1) });
    });
  if (out.length < count) throw new Error(`${SHAPES_DIR} holds ${out.length} videos, fewer than the ${count} asked for`);
  return out;
}

/** Each video's one 'uniform' clip (8 frames, stride 2), as videoLoader draws it, and its coded size. */
export async function planClips(videos: readonly BenchVideo[]): Promise<ClipPlan[]> {
  const pool = await DecodePool.create({ threads: 1 });
  try {
    const plans: ClipPlan[] = [];
    for (const v of videos) {
      const video = await pool.demuxVideo(v.bytes, { packets: false });
      const [clip] = sampleClips(
        video,
        { framesPerClip: CLIP.frames, stride: CLIP.stride },
        { kind: 'uniform', clips: 1 },
        { seed: 0, epoch: 0, key: v.key },
      );
      if (!clip) throw new Error(`${v.path}: the sampler gave no clip`);
      plans.push({ key: v.key, label: v.label, width: video.codedWidth, height: video.codedHeight, times: Array.from(clip.frameTimes) });
    }
    return plans;
  } finally {
    await pool.close();
  }
}
