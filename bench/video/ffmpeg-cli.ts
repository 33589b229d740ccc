// The native peer, for scale: Debian's ffmpeg CLI decoding each video's clip, one process per clip
// (`-ss` to the clip's first frame, every `stride`-th frame, cover to the clip size, raw RGB on
// stdout), `jobs` processes at once, each single-threaded so that `jobs` processes fill `jobs`
// cores. Its CPU time is what the exited processes left in this process's cutime and cstime.
import { spawn, spawnSync } from 'node:child_process';
import { exitedChildrenCpuSeconds } from '../shared/cpu.ts';
import type { BenchVideo } from './corpus.ts';
import { CLIP, type ClipPlan } from './types.ts';

export interface CliSample {
  seconds: number;
  cpu: number;
  clips: number;
  failures: number;
  firstError?: string;
}

/** The ffmpeg version line, or undefined where there is no ffmpeg on the PATH. */
export function ffmpegVersion(): string | undefined {
  const r = spawnSync('ffmpeg', ['-version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.split('\n')[0]?.trim() : undefined;
}

/** The arguments that decode one clip to raw RGB: the same frames and geometry as the page's columns. */
export function clipArgs(path: string, plan: ClipPlan): string[] {
  const start = plan.times[0] ?? 0;
  const { frames, stride, size } = CLIP;
  // Slightly before the first frame's time, so rounding of its timestamp cannot skip it.
  const seek = start > 0.001 ? ['-ss', (start - 0.001).toFixed(6)] : [];
  const vf = `select='not(mod(n\\,${stride}))',scale=${size}:${size}:force_original_aspect_ratio=increase:flags=bilinear,crop=${size}:${size}`;
  return ['-v', 'error', '-nostdin', '-threads', '1', '-filter_threads', '1', ...seek, '-i', path].concat([
    '-vf',
    vf,
    '-frames:v',
    String(frames),
    '-fps_mode',
    'passthrough',
    '-f',
    'rawvideo',
    '-pix_fmt',
    'rgb24',
    '-',
  ]);
}

function decodeClip(path: string, plan: ClipPlan): Promise<string | undefined> {
  const want = CLIP.frames * CLIP.size * CLIP.size * CLIP.channels;
  return new Promise((resolve) => {
    const child = spawn('ffmpeg', clipArgs(path, plan), { stdio: ['ignore', 'pipe', 'pipe'] });
    let bytes = 0;
    let stderr = '';
    child.stdout.on('data', (b: Uint8Array) => (bytes += b.length));
    child.stderr.on('data', (b: Uint8Array) => (stderr += String(b)));
    child.on('error', (e) => resolve(`${path}: ${e.message}`));
    child.on('close', (code) => {
      if (code !== 0) resolve(`${path}: ffmpeg exited with ${code}: ${stderr.trim().split('\n')[0]}`);
      else resolve(bytes === want ? undefined : `${path}: ${bytes} bytes of RGB, expected ${want}`);
    });
  });
}

/** One pass: every video's clip, `jobs` ffmpeg processes at a time. */
export async function cliPass(videos: readonly BenchVideo[], plans: readonly ClipPlan[], jobs: number): Promise<CliSample> {
  let next = 0,
    failures = 0;
  let firstError: string | undefined;
  const c0 = exitedChildrenCpuSeconds();
  const t0 = performance.now();
  const lane = async () => {
    for (let i = next++; i < videos.length; i = next++) {
      const error = await decodeClip(videos[i]!.path, plans[i]!);
      if (error) {
        failures++;
        firstError ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: jobs }, lane));
  const seconds = (performance.now() - t0) / 1000;
  return {
    seconds,
    cpu: exitedChildrenCpuSeconds() - c0,
    clips: videos.length - failures,
    failures,
    ...(firstError ? { firstError } : {}),
  };
}
