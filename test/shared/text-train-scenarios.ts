// Text training scenarios, runtime-neutral (each throws on failure): `tandem train --generated` and
// `--tokens` in-process (progress, held-out report, padding share, bottleneck line, a continuation
// of --prompt, the checkpoint), its usage errors, and trainText() resumed from a mid-run checkpoint
// ending with the bytes of a run that never stopped.
import { UsageError } from '../../src/cli/args.ts';
import { runCommand } from '../../src/cli/commands.ts';
import type { GpuContext } from '../../src/gpu/index.ts';
import { readFile } from '../../src/runtime/index.ts';
import { writeTokenShards } from '../../src/sources/index.ts';
import {
  CORPUS_ALPHABET,
  CORPUS_BOS,
  CORPUS_EOS,
  CORPUS_VOCAB_SIZE,
  corpusDocuments,
  corpusIds,
  corpusTokenizerJson,
} from '../../src/synthetic/index.ts';
import { decodeTextCheckpoint, trainText, type TextTrainingReport } from '../../src/train/index.ts';
import { OptionError } from '../../src/errors/index.ts';
import { assertEqual, check, rejectsWith } from './assert.ts';

/** A fresh model predicts about ln 24 = 3.18 nats a character; the corpus' unigram baseline is 2.76. */
const FRESH_LOSS = Math.log(CORPUS_VOCAB_SIZE);

async function trainCommand(args: string[]): Promise<{ out: string; report: TextTrainingReport; completion: string }> {
  const lines: string[] = [];
  check((await runCommand(args, (l) => lines.push(l))) === 0, 'exit code 0');
  const out = lines.join('\n');
  const reportPath = args[args.indexOf('--report') + 1] ?? '';
  const report = JSON.parse(new TextDecoder().decode(await readFile(reportPath))) as TextTrainingReport;
  const completion = /^prompt: "[^"]*" → "(.*)"$/m.exec(out)?.[1];
  check(completion !== undefined, `a continuation of the prompt:\n${out}`);
  check(
    [...completion].every((c) => CORPUS_ALPHABET.includes(c)),
    `the continuation is made of the corpus alphabet: ${JSON.stringify(completion)}`,
  );
  check(/bottleneck: \S/.test(out) && /padding \d+\.\d%/.test(out), `the final line names the bottleneck and the padding:\n${out}`);
  return { out, report, completion };
}

/** 40 steps of 8 × 64 on 300 generated documents, best-fit, held-out evaluation every 20 steps. */
export async function generatedTrainingReports(dir: string): Promise<TextTrainingReport> {
  const args = ['train', '--generated', '300', '--steps', '40', '--pack', 'best-fit', '--seed', '2', '--progress', 'lines'];
  const more = ['--eval-every', '20', '--checkpoint', `${dir}/gpt.ckpt`, '--report', `${dir}/report.json`, '--prompt', 'the cat'];
  const { out, report: r } = await trainCommand([...args, ...more]);
  check(r.steps === 40, `40 steps, got ${r.steps}`);
  check(r.lastLoss < 0.85 * r.firstLoss, `training loss fell only from ${r.firstLoss} to ${r.lastLoss}`);
  check(r.heldOut !== undefined && r.heldOut.loss < 2.6 && r.heldOut.tokens > 1000, `held-out ${JSON.stringify(r.heldOut)}`);
  assertEqual(
    r.losses.map((l) => l.step),
    [10, 20, 30, 40],
    'a loss read back every 10 steps',
  );
  // best-fit packs documents of 20 to 400 characters into rows of 65 tokens nearly full (under 1% on this corpus).
  check(r.paddingShare >= 0 && r.paddingShare < 0.1, `padding share ${r.paddingShare}`);
  check(r.tokens === Math.round(40 * 8 * 64 * (1 - r.paddingShare)), `tokens ${r.tokens} = the unpadded positions of 40 × 8 × 64`);
  const before = /held-out at step 0: loss (\d+\.\d+)/.exec(out)?.[1];
  check(before !== undefined && Math.abs(Number(before) - FRESH_LOSS) < 0.5, `held-out loss before training ${before}, about ln 24`);
  check(/held-out at step 20: loss \d/.test(out) && out.includes('step 40/40 loss'), `progress lines:\n${out}`);
  const checkpoint = decodeTextCheckpoint(await readFile(`${dir}/gpt.ckpt`));
  check(
    checkpoint.header.step === 40 && checkpoint.header.loader.kind === 'tandem.text',
    'the checkpoint holds step 40 and the loader state',
  );
  return r;
}

/** `--tokens`: the corpus written as token shards by writeTokenShards; the last shard held out. */
export async function tokenShardTrainingReports(dir: string): Promise<TextTrainingReport> {
  const docs = corpusDocuments(3, 400).map((text) => corpusIds(text));
  const manifest = await writeTokenShards(docs, {
    dir: `${dir}/tokens`,
    vocabSize: CORPUS_VOCAB_SIZE,
    bytesPerToken: 2,
    tokensPerShard: 20_000,
  });
  check(manifest.shards.length >= 3, `several shards, got ${manifest.shards.length}`);
  const args = ['train', '--tokens', `${dir}/tokens`, '--steps', '30', '--progress', 'lines', '--report', `${dir}/tokens.json`];
  const { out, report: r } = await trainCommand([...args, '--prompt', 'two dogs']);
  check(out.includes(`${manifest.shards.length} token shards in ${dir}/tokens, vocabulary ${CORPUS_VOCAB_SIZE}`), `data line:\n${out}`);
  check(r.steps === 30 && r.lastLoss < 0.85 * r.firstLoss, `30 steps, loss ${r.firstLoss} → ${r.lastLoss}`);
  // concat packing fills every row.
  check(r.paddingShare === 0 && r.tokens === 30 * 8 * 64, `concat: no padding, got ${r.paddingShare}`);
  check(r.heldOut !== undefined && r.heldOut.loss < FRESH_LOSS - 0.3, `held-out (the last shard) ${JSON.stringify(r.heldOut)}`);
  return r;
}

export async function usageErrorsNameTheFlag(dir: string): Promise<void> {
  const cases: [string[], RegExp][] = [
    [['--generated', '10', '--pack', 'tight'], /--pack takes concat, best-fit or pad/],
    [['--generated', '10', '--tokens', dir], /contradict/],
    [['--generated', '10', '--images', '4'], /image training only/],
    [['--steps', '4'], /text training only/],
    [['--text', `${dir}/none.txt`], /--text .*none\.txt/],
    [['--tokens', dir], /--tokens .*shards\.json/],
    [['--generated', '10', '--tokenizer', `${dir}/t.json`], /--tokenizer goes with --text or --tokens/],
  ];
  for (const [argv, pattern] of cases)
    await rejectsWith(
      runCommand(['train', ...argv], () => {}),
      (e) => e instanceof UsageError && pattern.test(e.message),
      `tandem train ${argv.join(' ')}`,
    );
}

/** 24 steps straight, against 12 + a resume from the step-12 checkpoint: the same final checkpoint, byte for byte. */
export async function resumedTrainingEndsTheSame(gpu: GpuContext): Promise<void> {
  const options = {
    source: { texts: corpusDocuments(1, 120) },
    model: { vocabSize: CORPUS_VOCAB_SIZE, context: 32, width: 32, depth: 1, heads: 2, mlpRatio: 2 },
    batchSize: 4,
    steps: 24,
    seed: 5,
    gpu,
    loader: { tokenizer: { encode: corpusIds }, bos: CORPUS_BOS, eos: CORPUS_EOS, shuffle: true },
    checkpointEvery: 12,
  };
  const whole = new Map<number, Uint8Array>();
  (await trainText({ ...options, onCheckpoint: async (bytes, step) => void whole.set(step, bytes) })).close();
  assertEqual([...whole.keys()], [12, 24], 'checkpoints at steps 12 and 24');
  const cut = whole.get(12) as Uint8Array;
  const resumed = new Map<number, Uint8Array>();
  const events: string[] = [];
  const r = await trainText({
    ...options,
    resumeFrom: cut,
    onCheckpoint: async (bytes, step) => void resumed.set(step, bytes),
    onEvent: (e) => void events.push(e.type === 'start' ? `start ${e.fromStep}` : e.type),
  });
  r.close();
  check(events[0] === 'start 12' && events.filter((e) => e === 'step').length === 12, `resumed at 12 for 12 steps: ${events.join(',')}`);
  const a = whole.get(24) as Uint8Array;
  const b = resumed.get(24) as Uint8Array;
  assertEqual(decodeTextCheckpoint(b).header, decodeTextCheckpoint(a).header, 'step, tokens and loader state');
  // Weights, AdamW moments and the optimizer's state, byte for byte.
  check(a.length === b.length && a.every((x, i) => x === b[i]), 'the resumed run ends with the bytes of the run that never stopped');
  // The check can fail: the step-12 checkpoint differs from the final one.
  check(cut.length !== a.length || cut.some((x, i) => x !== a[i]), 'the step-12 and step-24 checkpoints differ');
}

/**
 * A stop through `signal` after step 7, after step 20 (an evaluation step, whose evaluation must
 * not start), before the start, and from a timer wherever the run is. Each run resolves with `cancelled` at the step it was stopped
 * at, with no step, evaluation or checkpoint after the stop, and hands back the model trained so
 * far, which still completes; `liveWorkers(atMost)` (the runtime's count, once it has fallen to
 * `atMost` or stayed above it for a while) must come back to its count before, so no tokenizer
 * worker is left.
 */
export async function stoppedTrainingEndsCleanly(gpu: GpuContext, liveWorkers?: (atMost: number) => Promise<number>): Promise<void> {
  const workersBefore = await liveWorkers?.(0);
  const base = {
    source: { texts: corpusDocuments(1, 200) },
    heldOut: { texts: corpusDocuments(2, 30) },
    model: { vocabSize: CORPUS_VOCAB_SIZE, context: 32, width: 32, depth: 1, heads: 2, mlpRatio: 2 },
    batchSize: 4,
    steps: 40,
    gpu,
    loader: { tokenizer: { json: corpusTokenizerJson() }, tokenizerWorkers: 2, bos: CORPUS_BOS, eos: CORPUS_EOS },
    evalEvery: 10,
    checkpointEvery: 5,
    reportEvery: 1,
  };
  // From a timer, wherever the run is: -1 400 ms after the call (while it opens: the held-out read,
  // the tokenizer workers), -2 25 ms after step 3 (reading, tokenising, a step, a read-back).
  for (const stopAt of [7, 20, 0, -1, -2]) {
    const controller = new AbortController();
    if (stopAt === 0) controller.abort(new Error('stopped before the start'));
    const timer = stopAt === -1 ? setTimeout(() => controller.abort(new Error('stopped by a timer')), 400) : undefined;
    const events: string[] = [];
    const result = await trainText({
      ...base,
      signal: controller.signal,
      onCheckpoint: async () => {},
      onEvent: (e) => {
        events.push(e.type === 'step' ? `step ${e.step}` : e.type);
        if (e.type === 'step' && e.step === stopAt) controller.abort(new Error('stopped by the test'));
        if (e.type === 'step' && e.step === 3 && stopAt === -2) setTimeout(() => controller.abort(new Error('stopped by a timer')), 25);
      },
    });
    clearTimeout(timer);
    try {
      const r = result.report;
      if (stopAt < 0) {
        const last = events.filter((e) => e.startsWith('step')).at(-1) ?? 'step 0';
        check(
          `step ${r.steps}` === last && r.cancelled === r.steps < 40,
          `a timer's stop: ${r.steps} steps, cancelled ${r.cancelled}, last event ${last}`,
        );
        console.log(
          `[text-train] a timer's stop (${stopAt === -1 ? '400 ms' : '25 ms after step 3'}): ${r.steps} steps, cancelled ${r.cancelled}`,
        );
        continue;
      }
      check(r.cancelled, `stopped at ${stopAt}: the report says cancelled`);
      check(r.steps === stopAt, `stopped at step ${stopAt}: ${r.steps} steps (${events.join(',')})`);
      // No step, evaluation or checkpoint after the stop (step 20's evaluation is skipped).
      const after = stopAt === 0 ? events.filter((e) => e !== 'start') : events.slice(events.indexOf(`step ${stopAt}`) + 1);
      check(after.length === 0, `stopped at ${stopAt}: events after the stop: ${after.join(',')}`);
      check(
        r.losses.every((l) => l.step <= stopAt),
        `losses up to the stop ${JSON.stringify(r.losses)}`,
      );
      const ids = await result.trainer.complete([CORPUS_BOS, ...corpusIds('the')], 4);
      check(ids.length === 4, 'the model trained so far still completes');
    } finally {
      result.close();
    }
    if (liveWorkers) {
      const alive = await liveWorkers(workersBefore ?? 0);
      check(alive <= (workersBefore ?? 0), `stopped at ${stopAt}: ${alive} workers alive, ${workersBefore} before`);
    }
  }
}

/**
 * Ids the model has no embedding row for: a document whose encoder gives one is a typed failure of
 * that document (stage, key and reason in the report) and the rest trains; a loader vocabulary
 * larger than the model's is an OptionError before any GPU work (the device given is never touched).
 */
export async function outOfRangeIdsAreTypedFailures(gpu: GpuContext): Promise<void> {
  const texts = corpusDocuments(3, 24);
  const bad = texts[5]!;
  const encode = (text: string) => (text === bad ? [...corpusIds(text), CORPUS_VOCAB_SIZE + 7] : corpusIds(text));
  const base = {
    source: { texts },
    model: { vocabSize: CORPUS_VOCAB_SIZE, context: 16, width: 16, depth: 1, heads: 2, mlpRatio: 2 },
    batchSize: 2,
    steps: 3,
    loader: { tokenizer: { encode }, bos: CORPUS_BOS, eos: CORPUS_EOS },
  };
  const r = await trainText({ ...base, gpu });
  r.close();
  assertEqual(r.report.steps, 3, 'the other documents train');
  assertEqual(r.report.failures, 1, 'one failed document');
  const failed = r.report.failed[0];
  check(
    failed !== undefined && failed.stage === 'tokenize' && /token-out-of-range|not an integer in \[0, 24\)/.test(failed.reason),
    `the failure names its stage and the id: ${JSON.stringify(r.report.failed)}`,
  );
  let touched = false;
  const trap = new Proxy({} as GPUDevice, {
    get: () => {
      touched = true;
      throw new Error('the device was used');
    },
    has: () => {
      touched = true;
      return true;
    },
  });
  await rejectsWith(
    trainText({ ...base, gpu: trap, loader: { ...base.loader, vocabSize: CORPUS_VOCAB_SIZE + 100 } }),
    (e) => e instanceof OptionError && /vocabSize of at most the model's 24/.test(e.message),
    'a loader vocabulary larger than the model is an OptionError',
  );
  check(!touched, 'the device was touched before the refusal');
}
