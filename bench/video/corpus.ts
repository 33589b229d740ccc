// The bench's two corpora and each video's one clip:
//   - the moving-shapes fixtures (scripts/make-fixtures.sh): H.264, 64×64, 16 frames at 8 fps;
//   - made here with Debian's ffmpeg CLI and cached: H.264 320×240, 10 s at 30 fps, a keyframe
//     every 2 s, from lavfi sources that differ per file (testsrc2 with its hue turned and seeded noise, mandelbrot
//     zooms, seeded life in 4-pixel cells), so that decoding, not file handling, is the cost;
//   - real footage's stand-in, made here and cached: 10 s pans and zooms across the photographs
//     of Debian's mate-backgrounds (scripts/setup-bench.sh), 320×240, 480×360 and 640×480 in
//     turn, H.264 High with B-frames in MP4 and VP9 in WebM in turn, a keyframe every 2 s.
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

const PHOTOS_DIR = `${cacheDir()}/photo-sources/mate-backgrounds/usr/share/backgrounds/mate`;
export const PHOTO_PANS = {
  seconds: 10,
  fps: 30,
  keyframeSeconds: 2,
  sizes: [
    [320, 240],
    [480, 360],
    [640, 480],
  ],
} as const;
const PHOTO_PANS_DIR = `${cacheDir()}/bench/video-photo-pans-v2`;

/** The photographs, sorted by path: every .jpg under the mate-backgrounds tree. */
function photographs(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith('.jpg')) out.push(path);
    }
  };
  try {
    walk(PHOTOS_DIR);
  } catch {
    throw new Error(`${PHOTOS_DIR} is missing: run bash scripts/setup-bench.sh`);
  }
  return out;
}

/**
 * Pan `i`: photograph i mod n (scaled to 1600 px wide once, beforehand), a zoom from 1 to 1.3–1.6× while the view
 * moves across it (direction and speed from i), at one of the three sizes; H.264 High (x264
 * veryfast, 3 B-frames) in MP4 for even i, VP9 (libvpx, good quality, alt-ref frames) in WebM for odd.
 */
function panArgs(i: number, photo: string, out: string): string[] {
  const { seconds, fps, keyframeSeconds } = PHOTO_PANS;
  const [w, h] = PHOTO_PANS.sizes[i % PHOTO_PANS.sizes.length]!;
  const n = seconds * fps;
  const zoom = (1.3 + (i % 4) * 0.1).toFixed(1);
  const xs = ['in/N', '1-in/N', '0.5+0.4*sin(in/N*3.1416)', 'in/N*0.6+0.2'][i % 4]!.replaceAll('N', String(n));
  const ys = ['0.5', 'in/N', '1-in/N', '0.3+0.4*in/N'][(i >> 2) % 4]!.replaceAll('N', String(n));
  const filter =
    `zoompan=z='1+(${zoom}-1)*in/${n}':x='(iw-iw/zoom)*(${xs})':y='(ih-ih/zoom)*(${ys})'` + `:d=1:s=${w}x${h}:fps=${fps},format=yuv420p`;
  const g = String(keyframeSeconds * fps);
  const codec =
    i % 2 === 0
      ? ['-c:v', 'libx264', '-preset', 'veryfast', '-profile:v', 'high', '-bf', '3', '-g', g, '-keyint_min', g, '-movflags', '+faststart']
      : ['-c:v', 'libvpx-vp9', '-b:v', `${Math.round((w * h) / 100)}k`, '-deadline', 'good', '-cpu-used', '5', '-g', g, '-row-mt', '1'];
  return ['-v', 'error', '-y', '-loop', '1', '-framerate', String(fps), '-t', String(seconds), '-i', photo, '-vf', filter, ...codec, out];
}

/** The first `count` photograph pans, made where missing (a file appears only once ffmpeg finished it). */
export async function photoPanVideos(count: number, log: (s: string) => void): Promise<BenchVideo[]> {
  await makeDir(PHOTO_PANS_DIR);
  const photos = photographs();
  const out: BenchVideo[] = [];
  for (let i = 0; i < count; i++) {
    const ext = i % 2 === 0 ? 'mp4' : 'webm';
    const path = `${PHOTO_PANS_DIR}/${String(i).padStart(3, '0')}.${ext}`;
    if (!(await exists(path))) {
      const k = i % photos.length;
      const scaled = `${PHOTO_PANS_DIR}/photo-${String(k).padStart(2, '0')}-1600.jpg`;
      if (!(await exists(scaled))) {
        const r = spawnSync('ffmpeg', [
          '-v',
          'error',
          '-y',
          '-i',
          photos[k]!,
          '-vf',
          'scale=1600:-2',
          '-q:v',
          '2',
          `${scaled}.partial.jpg`,
        ]);
        if (r.status !== 0) throw new Error(`ffmpeg could not scale ${photos[k]}`);
        renameSync(`${scaled}.partial.jpg`, scaled);
      }
      const partial = `${path}.partial.${ext}`;
      const r = spawnSync('ffmpeg', panArgs(i, scaled, partial), { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`ffmpeg could not make ${path}: ${r.error?.message ?? r.stderr}`);
      renameSync(partial, path);
      log(`made ${path}`);
    }
    out.push({ path, bytes: new Uint8Array(readFileSync(path)), label: i % 3, key: `pans/${i}` });
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
