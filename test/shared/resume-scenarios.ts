// Kill tests with real processes: a short `tandem train` run (test/shared/resume-child.mjs, through
// the CLI's own runTrain: its atomic checkpoint writer and its --resume) is killed with SIGKILL and
// resumed by Tandem from its last checkpoint. Per kill, asserted:
//   - the kill landed before the run finished: the child was ended by the SIGKILL and its own log
//     has no "done" line;
//   - the resume started strictly inside the run (0 < step < last), at the last checkpoint the
//     killed run completed; a share of at most a sixth of the kills (one at least) may land at an end instead,
//     counted apart (a kill delayed past the final checkpoint by a busy machine);
//   - every other kill checkpoints every 3 steps, so the resume replays steps the killed run had
//     already trained;
//   - every third kill is made during a checkpoint write (TANDEM_TEST_SLOW_CHECKPOINT_MS holds the
//     temporary file half-written; at least half of these must land in a write, the rest are
//     counted apart): the resume then starts from the previous checkpoint, and once per test
//     Tandem's resume is handed that half-written file as the checkpoint and must refuse it with a
//     CheckpointError;
//   - the steps the resumed model carries (the killed run's up to its checkpoint, then the resumed
//     run's) trained on exactly the keys, in exactly the order, of a run that never stopped, and so
//     did every step the killed run logged; the final weights equal the uninterrupted run's, bit for bit.
// Node's child runs dist/, rebuilt here when src/ has changed; Deno's runs src/ itself.
// Runtime-neutral through node:child_process and node:fs, which Deno provides.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../../src/random/index.ts';
import { writeFolderShards } from '../../src/sources/index.ts';
import { encodeJpeg, renderSample } from '../../src/synthetic/index.ts';
import { check } from './assert.ts';
import { type ChildExit, type Kill, runKillable } from './kill-child.ts';
import { hubImageFile } from './parquet-loader-scenarios.ts';

/** How to start the child script: the runtime's executable and its arguments before the script. */
export interface ChildRuntime {
  command: string;
  args: string[];
}

const CHILD = new URL('./resume-child.mjs', import.meta.url).pathname;
const REPO = new URL('../../', import.meta.url).pathname;
/** How long a slowed checkpoint write holds its temporary file half-written. */
const SLOW_WRITE_MS = 150;

/**
 * The Node child imports dist/: rebuild it when its build key (scripts/source-key.sh, a hash of
 * what tsc reads) is not src/'s, so the kills never test stale code. Deno's child runs src/.
 */
export function ensureBuilt(): boolean {
  if ((globalThis as { Deno?: unknown }).Deno) return false;
  const key = execFileSync('bash', [join(REPO, 'scripts/source-key.sh')], { encoding: 'utf8' }).trim();
  const builtKey = join(REPO, 'dist/.build-key');
  if (existsSync(builtKey) && readFileSync(builtKey, 'utf8').trim() === key) return false;
  try {
    execFileSync('bash', [join(REPO, 'scripts/build.sh')], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const e = error as { stdout?: Uint8Array; stderr?: Uint8Array };
    throw new Error(`dist/ is older than src/ and rebuilding it failed: ${String(e.stdout ?? '')}${String(e.stderr ?? '')}`);
  }
  return true;
}

interface RunLog {
  /** The step Tandem said it resumed at (0: from scratch). */
  resumedAt: number;
  /** Each step's keys, by step number. */
  steps: Map<number, string>;
  finished: boolean;
  /** "NAME CODE message" when the run threw. */
  error?: string;
}

function readLog(dir: string): RunLog[] {
  const runs: RunLog[] = [];
  for (const line of readFileSync(join(dir, 'keys.log'), 'utf8').split('\n').filter(Boolean)) {
    const [head, ...rest] = line.split(' ');
    if (head === 'run') runs.push({ resumedAt: 0, steps: new Map(), finished: false });
    else if (head === 'resume') runs.at(-1)!.resumedAt = Number(rest[0]);
    else if (head === 'done') runs.at(-1)!.finished = true;
    else if (head === 'error') runs.at(-1)!.error = rest.join(' ');
    else runs.at(-1)!.steps.set(Number(head), rest.join(' '));
  }
  return runs;
}

/** Runs the child to its end, or kills it at `kill`; resolves when it has exited. */
async function runChild(
  runtime: ChildRuntime,
  dir: string,
  mode: 'fresh' | 'resume',
  every: number,
  data: { kind: 'files' | 'shards' | 'parquet'; path: string },
  kill?: Kill,
  env: Record<string, string> = {},
): Promise<ChildExit> {
  const exit = await runKillable(runtime.command, [...runtime.args, CHILD, dir, mode, String(every), data.kind, data.path], {
    ...(kill ? { kill } : {}),
    env,
    limitMs: 240_000,
  });
  // A child that never logged did not start (a broken build, a missing module).
  if (!existsSync(join(dir, 'keys.log')))
    throw new Error(`training child exited with ${exit.code ?? exit.signal} before it logged: ${exit.stderr.slice(-2000)}`);
  return exit;
}

/** Whether the log in `dir` already has step `step`. */
function logged(dir: string, step: number): boolean {
  try {
    return readFileSync(join(dir, 'keys.log'), 'utf8').includes(`\n${step} `);
  } catch {
    return false;
  }
}

function size(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return -1;
  }
}

export interface KillReport {
  kills: number;
  /** The step each resumed run started from. */
  resumedAt: number[];
  uninterruptedSeconds: number;
}

/**
 * 64 generated JPEGs in class folders; with 'shards' also written as 8 tar shards of 8, with
 * 'parquet' as two Hub-shaped Parquet files (an Image struct and a ClassLabel) of 40 and 24 rows in
 * uneven row groups (7 and 5 rows), given as `a,b`.
 */
async function writeTestData(root: string, kind: 'files' | 'shards' | 'parquet'): Promise<string> {
  const images = join(root, 'images');
  for (let i = 0; i < 64; i++) {
    const s = renderSample(3, i, { width: 64, height: 48, classes: 4 });
    mkdirSync(join(images, s.className), { recursive: true });
    writeFileSync(join(images, s.className, `${String(i).padStart(3, '0')}.jpg`), encodeJpeg(s.rgb, s.width, s.height, { quality: 90 }));
  }
  if (kind === 'files') return images;
  if (kind === 'parquet') {
    const rows = { bytes: [] as Uint8Array[], labels: [] as number[] };
    for (const [label, name] of readdirSync(images).sort().entries())
      for (const file of readdirSync(join(images, name)).sort()) {
        rows.bytes.push(readFileSync(join(images, name, file)));
        rows.labels.push(label);
      }
    const a = join(root, 'a.parquet');
    const b = join(root, 'b.parquet');
    writeFileSync(a, hubImageFile({ bytes: rows.bytes.slice(0, 40), labels: rows.labels.slice(0, 40) }, 7));
    writeFileSync(b, hubImageFile({ bytes: rows.bytes.slice(40), labels: rows.labels.slice(40) }, 5));
    return `${a},${b}`;
  }
  const out = join(root, 'shards');
  await writeFolderShards(images, { out, perShard: 8, seed: 1 });
  return out;
}

/**
 * One uninterrupted run, then `kills` runs each killed once and resumed to the end; every kill is
 * checked as described above. `data` 'shards' trains on streamed tar shards (the checkpoint then
 * holds the shard stream's position and shuffle buffer).
 */
export async function killedRunsResumeExactly(
  runtime: ChildRuntime,
  kills: number,
  seed = 1,
  kind: 'files' | 'shards' | 'parquet' = 'files',
): Promise<KillReport> {
  const rebuilt = ensureBuilt();
  const root = mkdtempSync(join(tmpdir(), 'tandem-resume-'));
  try {
    const data = { kind, path: await writeTestData(root, kind) };
    // Files: 52 training keys after the held-out split; shards and Parquet: all 64, nothing held out.
    const perEpoch = kind === 'files' ? 52 : 64;
    const last = Math.ceil((perEpoch * 2) / 8);
    const reference = join(root, 'reference');
    const t0 = performance.now();
    mkdirSync(reference);
    await runChild(runtime, reference, 'fresh', 3, data);
    const uninterruptedSeconds = (performance.now() - t0) / 1000;
    const [full] = readLog(reference);
    check(
      full !== undefined && full.finished && full.steps.size === last,
      `the uninterrupted run took ${last} steps: ${full?.steps.size} (${full?.error ?? 'no error'})`,
    );
    const finalReference = readFileSync(join(reference, 'final.safetensors'));
    // Every epoch trains on each training key once (batches run across the boundary).
    const allKeys = [...full.steps.values()].join(' ').split(' ');
    check(allKeys.length === 2 * perEpoch, `2 epochs × ${perEpoch} keys, got ${allKeys.length}`);
    for (const epoch of [allKeys.slice(0, perEpoch), allKeys.slice(perEpoch)])
      check(new Set(epoch).size === perEpoch, `an epoch repeats a key: ${epoch.length - new Set(epoch).size} repeats`);
    const rng = new Rng(seed);
    const pick = <T>(options: readonly T[]): T => options[Math.floor(rng.float() * options.length)]!;
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const resumedAt: number[] = [];
    const atEnds: number[] = [];
    const replayed: number[] = [];
    let midWrite = 0;
    let aimedAtWrites = 0;
    let aimedLanded = 0;
    let refused = '';
    for (let k = 0; k < kills; k++) {
      const dir = join(root, `kill-${k}`);
      mkdirSync(dir);
      const every = k % 2 === 0 ? 3 : 1;
      const duringWrite = k % 3 === 2;
      const partial = join(dir, 'run.ckpt.partial');
      const checkpoint = join(dir, 'run.ckpt');
      let kill: Kill;
      let what: string;
      let target = 0;
      if (duringWrite) {
        // A checkpoint with one before it; killed while its write holds the temporary file
        // half-written (or, were the write not atomic, while run.ckpt itself is cut short).
        target = pick(range(2, last - 1).filter((s) => s % every === 0 && s > every));
        const extraMs = Math.round(rng.float() * (SLOW_WRITE_MS / 5));
        let whole = 0;
        kill = {
          when: () => {
            const now = size(checkpoint);
            whole = Math.max(whole, now);
            return logged(dir, target) && (existsSync(partial) || (now >= 0 && now < whole / 1.5));
          },
          extraMs,
        };
        what = `during the checkpoint write of step ${target} + ${extraMs} ms, every ${every}`;
      } else {
        // After a random step past the first checkpoint, not on a checkpoint step (so that with
        // every 3 the resume replays steps), at least 3 steps before the end, plus a moment
        // within a step: the kill lands in reading, decoding, uploading, a step or a checkpoint.
        const afterStep = pick(range(every + 1, last - 3).filter((s) => every === 1 || s % every === 1));
        const extraMs = Math.round(rng.float() * 40);
        kill = { when: () => logged(dir, afterStep), extraMs };
        what = `after step ${afterStep} + ${extraMs} ms, every ${every}`;
      }
      const env: Record<string, string> = duringWrite ? { TANDEM_TEST_SLOW_CHECKPOINT_MS: String(SLOW_WRITE_MS) } : {};
      const exit = await runChild(runtime, dir, 'fresh', every, data, kill, env);
      const [killedRun] = readLog(dir);
      check(
        killedRun !== undefined && exit.killed && exit.signal === 'SIGKILL' && !killedRun.finished,
        `kill ${k} (${what}): the run was not killed before it finished (exit ${exit.code ?? exit.signal}, its log ${killedRun?.finished ? 'has' : 'lacks'} "done")`,
      );
      const lastLogged = Math.max(0, ...killedRun.steps.keys());
      for (const [step, keys] of killedRun.steps)
        check(keys === full.steps.get(step), `kill ${k} (${what}): the killed run's step ${step} trained on other keys`);
      // What the kill left of the write (read before the resume writes checkpoints of its own).
      const partialBytes = existsSync(partial) ? readFileSync(partial) : undefined;
      const checkpointSize = size(checkpoint);
      const resume = await runChild(runtime, dir, 'resume', every, data);
      const runs = readLog(dir);
      const resumed = runs.at(-1)!;
      const at = `kill ${k} (${what}, last logged step ${lastLogged}, resumed at ${resumed.resumedAt})`;
      check(runs.length === 2 && resumed.finished, `${at}: the resumed run did not finish: ${resumed.error ?? resume.stderr.slice(-1000)}`);
      resumedAt.push(resumed.resumedAt);
      // The latest checkpoint the killed run can have completed: the one before its last logged
      // step, or that step's own when it is a checkpoint step and its write may have finished.
      // A kill polled late lands in a later checkpoint's write, or past the write (counted apart).
      const landedMidWrite = partialBytes !== undefined && checkpointSize > 0 && partialBytes.length < checkpointSize;
      const before = every * Math.floor((lastLogged - 1) / every);
      const expected = landedMidWrite ? [lastLogged - every] : lastLogged % every === 0 ? [before, lastLogged] : [before];
      check(
        expected.includes(resumed.resumedAt),
        `${at}: not resumed at the last checkpoint the killed run completed (${expected.join(' or ')})`,
      );
      if (resumed.resumedAt <= 0 || resumed.resumedAt >= last) atEnds.push(resumed.resumedAt);
      if (every > 1) replayed.push(lastLogged - resumed.resumedAt);
      if (duringWrite) aimedAtWrites++;
      if (landedMidWrite) {
        // A plain kill may land in a (fast) checkpoint write too: it counts as one.
        check(lastLogged % every === 0, `${at}: a half-written checkpoint after a step that has none`);
        midWrite++;
        if (duringWrite) aimedLanded++;
        if (!refused) {
          // Had the write not been atomic, run.ckpt would hold these bytes: Tandem must refuse them.
          const torn = join(root, `torn-${k}`);
          mkdirSync(torn);
          writeFileSync(join(torn, 'run.ckpt'), partialBytes);
          await runChild(runtime, torn, 'resume', every, data);
          const [tornRun] = readLog(torn);
          const refusal = tornRun?.error ?? '';
          check(
            refusal.startsWith('CheckpointError ') && tornRun?.steps.size === 0,
            `${at}: resuming from the half-written checkpoint (${partialBytes?.length} bytes) was not refused with a CheckpointError: ${refusal || (tornRun?.finished ? 'it trained' : 'no error')}`,
          );
          refused = refusal.split(' ').slice(0, 2).join(' ');
        }
      }
      // What the final model carries: the killed run's steps up to the checkpoint, then the resumed run's.
      const carried = new Map<number, string>();
      for (const [step, keys] of killedRun.steps) if (step <= resumed.resumedAt) carried.set(step, keys);
      for (const [step, keys] of resumed.steps) carried.set(step, keys);
      check(carried.size === full.steps.size, `${at}: ${carried.size} steps carried`);
      for (const [step, keys] of full.steps) check(carried.get(step) === keys, `${at}: step ${step} trained on other keys`);
      const final = readFileSync(join(dir, 'final.safetensors'));
      check(final.equals(finalReference), `${at}: the final weights differ`);
    }
    check(
      aimedLanded >= Math.ceil(aimedAtWrites / 2),
      `only ${aimedLanded} of the ${aimedAtWrites} kills aimed at a checkpoint write landed in one (the rest just after it)`,
    );
    // At least one: a test of 3 kills must not fail on a single kill a busy machine delayed past the last checkpoint.
    const allowedAtEnds = Math.max(1, Math.floor(kills / 6));
    check(
      atEnds.length <= allowedAtEnds,
      `${atEnds.length} of ${kills} kills resumed at an end (steps ${atEnds.join(', ')}); at most ${allowedAtEnds} may`,
    );
    console.log(
      `[resume] ${runtime.command.split('/').at(-1)} ${kind}${rebuilt ? ' (dist/ rebuilt first)' : ''}: ${kills} kills, ${kills} before the run finished; ` +
        `resumed strictly inside ${kills - atEnds.length}, at an end ${atEnds.length} (at most ${allowedAtEnds}); ` +
        `every 3 steps: ${replayed.length} kills, replayed ${replayed.join(', ')} steps; ` +
        `${aimedLanded} of ${aimedAtWrites} kills aimed at a checkpoint write landed in one, ${midWrite} in all, each resumed from the checkpoint before${refused ? `; the half-written file refused: ${refused}` : ''}`,
    );
    return { kills, resumedAt, uninterruptedSeconds };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
