// dawn on lavapipe: `tandem train --generated` end to end (progress, held-out report, padding share,
// bottleneck line, prompt continuation, checkpoint), and trainText() resumed from a mid-run
// checkpoint ending with the bytes of a run that never stopped.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCommand } from '../../src/cli/commands.ts';
import { UsageError } from '../../src/cli/args.ts';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { readFile } from '../../src/runtime/index.ts';
import { CORPUS_ALPHABET, corpusDocuments, CORPUS_BOS, CORPUS_EOS } from '../../src/synthetic/index.ts';
import { decodeTextCheckpoint, trainText, type TextTrainingReport } from '../../src/text/index.ts';

let dir: string;
let gpu: GpuContext;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tandem-text-train-'));
  gpu = await acquireGpu();
});
afterAll(async () => {
  gpu?.close();
  await rm(dir, { recursive: true, force: true });
});

it('tandem train --generated: loss falls, held-out report, padding, bottleneck, a continuation in the corpus alphabet', async () => {
  const lines: string[] = [];
  const args = ['train', '--generated', '300', '--steps', '40', '--pack', 'best-fit', '--seed', '2', '--progress', 'lines'];
  const more = ['--eval-every', '20', '--checkpoint', `${dir}/gpt.ckpt`, '--report', `${dir}/report.json`, '--prompt', 'the cat'];
  expect(await runCommand([...args, ...more], (l) => lines.push(l))).toBe(0);
  const out = lines.join('\n');
  const r = JSON.parse(new TextDecoder().decode(await readFile(`${dir}/report.json`))) as TextTrainingReport;
  expect(r.steps).toBe(40);
  // The unigram baseline of the corpus is 2.76 nats; a model that learns nothing stays at ln 24 = 3.18.
  expect(r.lastLoss).toBeLessThan(0.85 * r.firstLoss);
  expect(r.heldOut?.loss).toBeLessThan(2.6);
  expect(r.heldOut?.tokens).toBeGreaterThan(1000);
  expect(r.losses.map((l) => l.step)).toEqual([10, 20, 30, 40]);
  // best-fit packs whole documents of 20 to 400 characters into rows of 65 tokens: some padding, never most.
  expect(r.paddingShare).toBeGreaterThan(0);
  expect(r.paddingShare).toBeLessThan(0.5);
  expect(r.tokens).toBe(Math.round(40 * 8 * 64 * (1 - r.paddingShare)));
  expect(out).toMatch(/held-out at step 0: loss 3\.\d+[^]*held-out at step 20: loss \d/);
  expect(out).toMatch(/bottleneck: \S/);
  expect(out).toMatch(/padding \d+\.\d%/);
  expect(out).toContain('step 40/40 loss');
  const completion = /prompt: "the cat" → "(.*)"$/m.exec(out)?.[1];
  expect(completion, out).toBeDefined();
  expect([...(completion ?? '')].every((c) => CORPUS_ALPHABET.includes(c))).toBe(true);
  const checkpoint = decodeTextCheckpoint(await readFile(`${dir}/gpt.ckpt`));
  expect(checkpoint.header.step).toBe(40);
  expect(checkpoint.header.loader.kind).toBe('tandem.text');
}, 60_000);

it('tandem train --text: bad flags are usage errors naming the flag', async () => {
  const reject = (argv: string[], pattern: RegExp) =>
    expect(runCommand(['train', ...argv], () => {})).rejects.toSatisfy((e: unknown) => e instanceof UsageError && pattern.test(e.message));
  await reject(['--generated', '10', '--pack', 'tight'], /--pack takes concat, best-fit or pad/);
  await reject(['--generated', '10', '--tokens', dir], /contradict/);
  await reject(['--generated', '10', '--images', '4'], /image training only/);
  await reject(['--steps', '4'], /text training only/);
  await reject(['--text', `${dir}/none.txt`], /--text .*none\.txt/);
  await reject(['--tokens', dir], /--tokens .*shards\.json/);
});

it('trainText resumed from its step-12 checkpoint ends with the bytes of a run that never stopped', async () => {
  const options = {
    source: { texts: corpusDocuments(1, 120) },
    model: { vocabSize: 24, context: 32, width: 32, depth: 1, heads: 2, mlpRatio: 2 },
    batchSize: 4,
    steps: 24,
    seed: 5,
    gpu,
    loader: {
      tokenizer: { encode: (t: string) => [...t].map((c) => CORPUS_ALPHABET.indexOf(c) + 2) },
      bos: CORPUS_BOS,
      eos: CORPUS_EOS,
      shuffle: true,
    },
    checkpointEvery: 12,
  };
  const whole = new Map<number, Uint8Array>();
  (await trainText({ ...options, onCheckpoint: async (bytes, step) => void whole.set(step, bytes) })).close();
  const cut = whole.get(12);
  expect([...whole.keys()]).toEqual([12, 24]);
  const resumed = new Map<number, Uint8Array>();
  const events: string[] = [];
  const r = await trainText({
    ...options,
    resumeFrom: cut,
    onCheckpoint: async (bytes, step) => void resumed.set(step, bytes),
    onEvent: (e) => void events.push(e.type === 'start' ? `start ${e.fromStep}` : e.type),
  });
  r.close();
  expect(events[0]).toBe('start 12');
  expect(events.filter((e) => e === 'step').length).toBe(12);
  const a = whole.get(24);
  const b = resumed.get(24);
  expect(a && b && decodeTextCheckpoint(b).header).toEqual(a && decodeTextCheckpoint(a).header);
  // Weights, AdamW moments and the optimizer's state, byte for byte.
  expect(Buffer.from(b ?? []).equals(Buffer.from(a ?? []))).toBe(true);
  // The check can fail: the step-12 checkpoint's model differs from the final one.
  expect(Buffer.from(cut ?? []).equals(Buffer.from(a ?? []))).toBe(false);
}, 60_000);
