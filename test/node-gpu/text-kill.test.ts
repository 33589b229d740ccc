import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import {
  killedTextRunsResumeExactly,
  NODE_CLI,
  processesNaming,
  realTokenizer,
  runCli,
  writeDocuments,
} from '../shared/text-kill-scenarios.ts';

// TANDEM_TEXT_KILL_RUNS can only raise the count.
const kills = Math.max(3, Number(process.env.TANDEM_TEXT_KILL_RUNS) || 0);

it(`tandem train --text with Llama 2's tokenizer.json (tokenised in workers), SIGKILLed ${kills} times, one in a checkpoint write, each resumed with --resume: the final checkpoint byte for byte the uninterrupted run's, no process left; other pack, seq-len and tokenizer refused by name`, {
  timeout: 600_000,
}, async () => {
  const r = await killedTextRunsResumeExactly(NODE_CLI, { kills, seed: 11, pack: 'concat' });
  expect(r.resumedAt.length).toBe(kills);
  console.log(
    `[text kill] Node, concat: resumed at steps ${r.resumedAt.join(', ')}; ${r.midWrite} in a write; an uninterrupted run takes ${r.uninterruptedSeconds.toFixed(1)} s\n  ${r.refusals.join('\n  ')}`,
  );
});

// A vocabulary of 128k ids: the CLI once sized the model with Math.max(...ids), which overflowed
// the stack ("Maximum call stack size exceeded") for Llama 3's and Gemma 3's files.
it("tandem train --text runs with Llama 3's tokenizer.json (128k vocabulary)", { timeout: 180_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'tandem-big-vocab-'));
  try {
    writeDocuments(join(root, 'docs'));
    const r = await runCli(NODE_CLI, [
      'train',
      '--text',
      join(root, 'docs'),
      '--tokenizer',
      realTokenizer('llama3'),
      '--steps',
      '1',
      '--batch',
      '1',
      '--seq-len',
      '8',
    ]);
    expect(r.stderr.trim().split('\n').at(-1) ?? '').not.toMatch(/error/);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('GPT vocabulary 128256 ');
    expect(r.stdout).toContain('train: 1 steps');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

// Node's CLI is two processes (a parent filtering dawn's native stderr, and the run): SIGTERM to the
// one the user started reaches the run too, and both are gone.
it('SIGTERM to `tandem train` in Node ends the run and leaves no process', { timeout: 120_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'tandem-sigterm-'));
  try {
    const report = join(root, 'report.json');
    const r = await runCli(NODE_CLI, ['train', '--generated', '400', '--steps', '5000', '--report', report], {
      when: () => processesNaming(report).length >= 2,
      extraMs: 1500,
      signal: 'SIGTERM',
    });
    expect(r.code).toBe(143); // 128 + SIGTERM's 15: the run's own end, passed on by the parent
    expect(r.stdout).not.toContain('train: ');
    expect(processesNaming(report)).toEqual([]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
