// Kill tests with real processes: a short training run (test/shared/resume-child.mjs, on the built
// package) is killed with SIGKILL at seeded random moments (loading, decoding, uploading, a step,
// a checkpoint write) and resumed from its last checkpoint. Each time, across the kill:
//   - the steps the resumed model carries (those up to the checkpoint, then the resumed run's)
//     trained on exactly the keys, in exactly the order, of a run that never stopped, so every
//     sample is consumed once per epoch;
//   - the final parameters equal the uninterrupted run's, bit for bit;
//   - a checkpoint cut off mid-write (a leftover temporary file) is never read.
// Runtime-neutral through node:child_process and node:fs, which Deno provides.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../../src/random/index.ts';
import { writeFolderShards } from '../../src/sources/index.ts';
import { encodeJpeg, renderSample } from '../../src/synthetic/index.ts';
import { check } from './assert.ts';

/** How to start the child script: the runtime's executable and its arguments before the script. */
export interface ChildRuntime {
  command: string;
  args: string[];
}

const CHILD = new URL('./resume-child.mjs', import.meta.url).pathname;

interface RunLog {
  /** The step the run resumed at (0: from scratch). */
  resumedAt: number;
  /** Each step's keys, by step number. */
  steps: Map<number, string>;
  finished: boolean;
}

function readLog(dir: string): RunLog[] {
  const runs: RunLog[] = [];
  for (const line of readFileSync(join(dir, 'keys.log'), 'utf8').split('\n').filter(Boolean)) {
    const [head, ...rest] = line.split(' ');
    if (head === 'resume') runs.push({ resumedAt: Number(rest[0]), steps: new Map(), finished: false });
    else if (head === 'done') runs.at(-1)!.finished = true;
    else runs.at(-1)!.steps.set(Number(head), rest.join(' '));
  }
  return runs;
}

/** When to kill a run: `extraMs` after it logs step `afterStep` (0: after it starts). */
interface KillAt {
  afterStep: number;
  extraMs: number;
}

/** Runs the child to its end, or kills it at `kill`; resolves when it has exited. */
function runChild(
  runtime: ChildRuntime,
  dir: string,
  resume: boolean,
  shards: string | undefined,
  kill?: KillAt,
): Promise<{ code: number | null; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(runtime.command, [...runtime.args, CHILD, dir, resume ? 'resume' : 'fresh', ...(shards ? [shards] : [])], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Uint8Array) => (stderr += new TextDecoder().decode(d)));
    let killed = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const killLater = (ms: number) => (timer = setTimeout(() => (killed = child.kill('SIGKILL')), ms));
    // Polls the run's key log for the step to kill after (a synchronous append per step).
    const poll =
      kill && kill.afterStep > 0
        ? setInterval(() => {
            let log = '';
            try {
              log = readFileSync(join(dir, 'keys.log'), 'utf8');
            } catch {
              return;
            }
            if (log.split('\n').some((line) => line.startsWith(`${kill.afterStep} `))) {
              clearInterval(poll);
              killLater(kill.extraMs);
            }
          }, 5)
        : undefined;
    if (kill && kill.afterStep === 0) killLater(kill.extraMs);
    const limit = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      clearInterval(poll);
      clearTimeout(limit);
      if (!killed && code !== 0) reject(new Error(`training child exited with ${code}: ${stderr.slice(-2000)}`));
      else resolve({ code, killed });
    });
  });
}

export interface KillReport {
  kills: number;
  /** The step each resumed run started from. */
  resumedAt: number[];
  uninterruptedSeconds: number;
}

/** 64 generated JPEGs written as 8 tar shards of 8 (`tandem shards`' format), for the streamed runs. */
async function writeTestShards(root: string): Promise<string> {
  const images = join(root, 'images');
  for (let i = 0; i < 64; i++) {
    const s = renderSample(3, i, { width: 64, height: 48, classes: 4 });
    mkdirSync(join(images, s.className), { recursive: true });
    writeFileSync(join(images, s.className, `${String(i).padStart(3, '0')}.jpg`), encodeJpeg(s.rgb, s.width, s.height, { quality: 90 }));
  }
  const out = join(root, 'shards');
  await writeFolderShards(images, { out, perShard: 8, seed: 1 });
  return out;
}

/**
 * One uninterrupted run, then `kills` runs each killed once at a seeded random moment and resumed
 * to the end; every pair is checked as described above. `data` 'shards' trains on streamed tar
 * shards (the checkpoint then holds the shard stream's position and shuffle buffer).
 */
export async function killedRunsResumeExactly(
  runtime: ChildRuntime,
  kills: number,
  seed = 1,
  data: 'files' | 'shards' = 'files',
): Promise<KillReport> {
  const root = mkdtempSync(join(tmpdir(), 'tandem-resume-'));
  try {
    const shards = data === 'shards' ? await writeTestShards(root) : undefined;
    // Files: 52 training keys after the held-out split; shards: all 64, nothing held out.
    const perEpoch = shards ? 64 : 52;
    const totalSteps = Math.ceil((perEpoch * 2) / 8);
    const reference = join(root, 'reference');
    const t0 = performance.now();
    mkdirSync(reference);
    await runChild(runtime, reference, false, shards);
    const uninterruptedSeconds = (performance.now() - t0) / 1000;
    const [full] = readLog(reference);
    check(
      full !== undefined && full.finished && full.steps.size === totalSteps,
      `the uninterrupted run took ${totalSteps} steps: ${full?.steps.size}`,
    );
    const finalReference = readFileSync(join(reference, 'final.f32'));
    // Every epoch trains on each training key once (batches run across the boundary).
    const allKeys = [...full.steps.values()].join(' ').split(' ');
    check(allKeys.length === 2 * perEpoch, `2 epochs × ${perEpoch} keys, got ${allKeys.length}`);
    for (const epoch of [allKeys.slice(0, perEpoch), allKeys.slice(perEpoch)])
      check(new Set(epoch).size === perEpoch, `an epoch repeats a key: ${epoch.length - new Set(epoch).size} repeats`);
    const rng = new Rng(seed);
    const random = () => rng.float();
    const resumedAt: number[] = [];
    for (let k = 0; k < kills; k++) {
      const dir = join(root, `kill-${k}`);
      mkdirSync(dir);
      // A random step (0: while loading), then a random moment within about one step's time: the
      // kill lands in reading, decoding, uploading, a step or a checkpoint write.
      const kill = { afterStep: Math.floor(random() * totalSteps), extraMs: Math.round(random() * 250) };
      const delay = `step ${kill.afterStep} + ${kill.extraMs} ms`;
      await runChild(runtime, dir, false, shards, kill.afterStep === 0 ? { afterStep: 0, extraMs: 800 + kill.extraMs * 4 } : kill);
      // A kill in the middle of a checkpoint write leaves its temporary file; it must never be read.
      if (k % 2 === 1) writeFileSync(join(dir, 'run.ckpt.partial'), new Uint8Array(123).fill(7));
      await runChild(runtime, dir, true, shards);
      const runs = readLog(dir);
      const resumed = runs.at(-1)!;
      check(resumed.finished, `kill ${k} (after ${delay}): the resumed run did not finish`);
      resumedAt.push(resumed.resumedAt);
      // What the final model carries: the killed run's steps up to the checkpoint, then the resumed run's.
      const carried = new Map<number, string>();
      for (const [step, keys] of runs[0]!.steps) if (step <= resumed.resumedAt) carried.set(step, keys);
      for (const [step, keys] of resumed.steps) carried.set(step, keys);
      check(carried.size === full.steps.size, `kill ${k} (after ${delay}, resumed at ${resumed.resumedAt}): ${carried.size} steps carried`);
      for (const [step, keys] of full.steps)
        check(
          carried.get(step) === keys,
          `kill ${k} (after ${delay}, resumed at ${resumed.resumedAt}): step ${step} trained on other keys`,
        );
      const final = readFileSync(join(dir, 'final.f32'));
      check(final.equals(finalReference), `kill ${k} (after ${delay}, resumed at ${resumed.resumedAt}): the final weights differ`);
    }
    return { kills, resumedAt, uninterruptedSeconds };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
