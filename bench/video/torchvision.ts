// The PyTorch user's peer: torchvision.io.VideoReader (Debian's python3-torchvision, whose
// 'video_reader' backend is built on ffmpeg; PyAV, which torchvision.io.read_video needs, is not
// in Debian 12) in one Python process per pass, timed inside Python (bench/video/torchvision_clips.py).
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import process from 'node:process';
import type { BenchVideo } from './corpus.ts';
import { CLIP, type ClipPlan, MEAN, STD } from './types.ts';

const PYTHON = '/usr/bin/python3';
const SCRIPT = new URL('./torchvision_clips.py', import.meta.url).pathname;

export interface TorchvisionSample {
  seconds: number;
  cpu: number;
  clips: number;
  failures: number;
  firstError?: string;
}

/** torchvision's version where its video_reader backend works; else why not. */
export function torchvisionVideo(): { version: string } | { missing: string } {
  const probe = "import torchvision; torchvision.set_video_backend('video_reader'); print(torchvision.__version__)";
  const r = spawnSync(PYTHON, ['-c', probe], { encoding: 'utf8' });
  if (r.status === 0) return { version: r.stdout.trim() };
  const why = (r.stderr || r.error?.message || '').trim().split('\n').pop() ?? '';
  return { missing: `torchvision column missing (${why}): install Debian's python3-torchvision` };
}

/** Writes the pass's plan for the Python side once per corpus; returns its path. */
export function torchvisionPlan(id: string, videos: readonly BenchVideo[], plans: readonly ClipPlan[]): string {
  const path = `${tmpdir()}/tandem-bench-video-${process.pid}-${id}.json`;
  const clips = videos.map((v, i) => ({ path: v.path, start: plans[i]!.times[0] ?? 0 }));
  const plan = { frames: CLIP.frames, stride: CLIP.stride, size: CLIP.size, mean: MEAN, std: STD, threads: 1, clips };
  writeFileSync(path, JSON.stringify(plan));
  return path;
}

export async function torchvisionPass(planPath: string): Promise<TorchvisionSample> {
  const r = await jsonLineOf<TorchvisionSample & { firstError: string | null }>(PYTHON, [SCRIPT, planPath]);
  return {
    seconds: r.seconds,
    cpu: r.cpu,
    clips: r.clips,
    failures: r.failures,
    ...(r.firstError ? { firstError: r.firstError } : {}),
  };
}

/**
 * Runs a peer's process and parses the JSON line it prints last; a non-zero exit or no JSON line
 * rejects with the last line of its stderr (the peers log per file there, so only the end is kept).
 */
export function jsonLineOf<T>(command: string, args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '',
      stderr = '';
    child.stdout.on('data', (b: Uint8Array) => (stdout += String(b)));
    child.stderr.on('data', (b: Uint8Array) => (stderr = (stderr + String(b)).slice(-2000)));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{'))
        return reject(new Error(`${args[0]} exited with ${code}: ${stderr.trim().split('\n').pop()}`));
      resolve(JSON.parse(line) as T);
    });
  });
}
