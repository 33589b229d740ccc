// GPT scenarios, runtime-neutral (each throws on failure): a training step on the GPU against the
// f64 reference (logits, loss, every gradient, one AdamW update) on rows that pack several
// documents and padding, and learning the generated corpus from the text loader to its bar
// (docs/gpt.md).
import type { TrainConfig } from '../../src/vit/config.ts';
import { adamwStep } from '../../src/vit/reference.ts';
import { CORPUS_BOS, CORPUS_EOS, CORPUS_VOCAB_SIZE, corpusDocuments, corpusIds, corpusText } from '../../src/synthetic/index.ts';
import { textLoader } from '../../src/text/index.ts';
import { type GptConfig, gptPresets, initGptParams } from '../../src/gpt/config.ts';
import { GptTrainer } from '../../src/gpt/model.ts';
import { OptionError } from '../../src/errors/index.ts';
import { ReferenceGpt, type ReferenceBatch } from '../../src/gpt/reference.ts';
import { assertEqual, check } from './assert.ts';
import { close, relErr, upload } from './vit-helpers.ts';

export const gptStepConfig: GptConfig = { vocabSize: 11, context: 8, width: 16, depth: 2, heads: 2, mlpRatio: 2 };

/**
 * Three rows of 8: two documents then one (split mid-row), one document filling the row, one
 * document then padding (docId −1, label −1); labels −1 also where a document ends.
 */
export function mixedBatch(): ReferenceBatch & { B: number } {
  const docIds = [0, 0, 0, 1, 1, 1, 1, 1, /**/ 0, 0, 0, 0, 0, 0, 0, 0, /**/ 0, 0, 0, 0, 0, -1, -1, -1];
  const inputs = [0, 5, 7, 0, 3, 3, 9, 2, /**/ 4, 6, 8, 10, 2, 2, 5, 1, /**/ 0, 9, 4, 6, 1, 0, 0, 0];
  const labels = [5, 7, -1, 3, 3, 9, 2, 8, /**/ 6, 8, 10, 2, 2, 5, 1, -1, /**/ 9, 4, 6, 1, -1, -1, -1, -1];
  const positions = [0, 1, 2, 0, 1, 2, 3, 4, /**/ 0, 1, 2, 3, 4, 5, 6, 7, /**/ 0, 1, 2, 3, 4, 0, 0, 0];
  return { inputs, labels, docIds, positions, B: 3 };
}

function deviceBatch(device: GPUDevice, batch: ReferenceBatch) {
  const i32 = (a: ArrayLike<number>) => upload(device, Int32Array.from(a));
  return { inputs: i32(batch.inputs), labels: i32(batch.labels), docIds: i32(batch.docIds), positions: i32(batch.positions) };
}

/**
 * Relative tolerances of the step check: 5–10 times the largest error measured (Node and Deno on
 * lavapipe: logits 4.2e-7, gradients 1.5e-6, update 6.6e-5; Chromium's SwiftShader: 4.5e-7,
 * 1.3e-6, 3.6e-5), and well below what a slip gives: the erf GELU for the tanh one moves the
 * logits by 2.0e-4 and the gradients by 1.7e-3, a LayerNorm ε of 1e-6 for 1e-5 by 1.1e-4 and
 * 3.1e-4 (the positive controls in the check). The update's floor is f32 storage: a parameter's
 * last bit against an update of about lr.
 */
const TOL = { logits: 4e-6, grads: 1.5e-5, update: 3e-4 };

/**
 * One training step on the GPU vs the reference, within TOL relative each. Also checks that the
 * comparison can fail: the same reference with the documents ignored (causal mask only) must be
 * far from the GPU's logits.
 */
export async function gptStepMatchesCpu(device: GPUDevice): Promise<string[]> {
  const log: string[] = [];
  const c = gptStepConfig;
  const { B, ...batch } = mixedBatch();
  const train: Partial<TrainConfig> = { lr: 1e-2, warmupSteps: 1, totalSteps: 10, weightDecay: 0.05, clipNorm: 0.5 };
  const init = initGptParams(c, 3, 0.3); // larger than default, so attention is far from uniform
  const trainer = await GptTrainer.create(device, { config: c, batchSize: B, train, params: init });
  const ref = new ReferenceGpt(c);
  const params = Float64Array.from(init);
  const buffers = deviceBatch(device, batch);
  try {
    const encoder = device.createCommandEncoder();
    trainer.step(encoder, buffers);
    device.queue.submit([encoder.finish()]);
    const report = await trainer.readLoss();
    const fwd = ref.forward(params, batch, B);
    check(report.tokens === fwd.count && fwd.count === 18, `labelled positions: GPU ${report.tokens}, reference ${fwd.count}, want 18`);
    const logits = await trainer.logits();
    const worst = { logits: close('logits', logits, fwd.logits, TOL.logits, log), grads: 0, update: 0 };
    close('loss', [report.loss], [fwd.loss], TOL.logits, log);
    close('accuracy', [report.accuracy * report.tokens], [fwd.correct], 0, log);
    const unmasked = ref.forward(params, { ...batch, docIds: Array.from(batch.docIds, () => 0) }, B);
    const sensitivity = relErr(logits, unmasked.logits);
    log.push(`logits against a reference ignoring documents: ${sensitivity.toExponential(2)}`);
    check(sensitivity > 1e-2, `the document mask changes the logits by only ${sensitivity}: the check could not tell`);
    const grads = ref.backward(params, fwd, B);
    const got = await trainer.readGrads();
    for (const t of ref.layout.tensors)
      worst.grads = Math.max(worst.grads, close(`grad ${t.name}`, ref.view(got, t.name), ref.view(grads, t.name), TOL.grads, log));
    const slips: string[] = [];
    // The positive controls: a reference with the other GELU form, or a LayerNorm ε of 1e-6,
    // differs from the GPU by more than the tolerances above, so a slip in either fails the check.
    for (const [slip, variant] of [
      ['GELU erf for tanh', { gelu: 'erf' }],
      ['LayerNorm eps 1e-6 for 1e-5', { lnEps: 1e-6 }],
    ] as const) {
      const other = new ReferenceGpt(c, variant);
      const slipped = other.forward(params, batch, B);
      const slippedGrads = other.backward(params, slipped, B);
      const logitErr = relErr(logits, slipped.logits);
      const gradErr = Math.max(
        ...ref.layout.tensors.map((t) => relErr(ref.view(got, t.name), other.view(slippedGrads, t.name)) / TOL.grads),
      );
      slips.push(`${slip}: logits ${logitErr.toExponential(2)}, gradients ${(gradErr * TOL.grads).toExponential(2)}`);
      check(
        logitErr > TOL.logits || gradErr > 1,
        `a reference with ${slip} is within the tolerances (logits ${logitErr}, gradients ${gradErr}× the tolerance): the check could not tell`,
      );
    }
    const state = { m: new Float64Array(params.length), v: new Float64Array(params.length), step: 0 };
    const before = Float64Array.from(params);
    // AdamW on the GPU's own gradients (checked above): Adam's 1/√v turns f32 noise of a tiny
    // gradient into a whole ±lr step, as the ViT's scenario explains.
    const lr = adamwStep(params, Float64Array.from(got), state, trainer.train, ref.layout.decayEnd);
    close('lr', [report.lr], [lr], TOL.logits, log);
    close('grad norm', [report.gradNorm], [Math.hypot(...grads)], TOL.grads, log);
    const after = await trainer.readParams();
    for (const t of ref.layout.tensors) {
      const want = ref.view(params, t.name).map((v, i) => v - before[t.offset + i]!);
      const have = ref.view(after, t.name).map((v, i) => v - before[t.offset + i]!);
      worst.update = Math.max(worst.update, close(`update ${t.name}`, have, want, TOL.update, log));
    }
    log.push(
      `worst relative error: logits ${worst.logits.toExponential(2)}, gradients ${worst.grads.toExponential(2)}, update ${worst.update.toExponential(2)} (tolerances ${TOL.logits}, ${TOL.grads}, ${TOL.update}); ${slips.join('; ')}`,
    );
  } finally {
    trainer.close();
    for (const b of Object.values(buffers)) b.destroy();
  }
  return log;
}

/** Mean next-token loss (nats) of always predicting the held-out labels' own frequencies. */
export function unigramBaseline(labelSets: readonly ArrayLike<number>[], V: number): { loss: number; accuracy: number } {
  const counts = new Float64Array(V);
  let n = 0;
  for (const labels of labelSets)
    for (let i = 0; i < labels.length; i++) {
      const y = labels[i] ?? -1;
      if (y >= 0) [counts[y], n] = [(counts[y] ?? 0) + 1, n + 1];
    }
  let loss = 0;
  for (const c of counts) if (c > 0) loss -= (c / n) * Math.log(c / n);
  return { loss, accuracy: Math.max(...counts) / n };
}

export interface LearnResult {
  /** Held-out next-character loss and accuracy after training. */
  loss: number;
  accuracy: number;
  baseline: { loss: number; accuracy: number };
  /** The first and last training reports' loss. */
  firstLoss: number;
  lastLoss: number;
  seconds: number;
  /** A greedy completion of a held-out prompt, as text. */
  sample: string;
}

/**
 * The bar (docs/gpt.md): held-out next-character loss ≤ 1.0 nats and accuracy ≥ 62%, against the
 * unigram baseline's 2.7 nats and 19%. 250 steps of 8 × 64 reach about 0.75 and 71%.
 */
export const GPT_BAR = { loss: 1.0, accuracy: 0.62 };

export function checkBar(r: LearnResult): void {
  const line = `held-out loss ${r.loss.toFixed(3)} (bar ${GPT_BAR.loss}, unigram ${r.baseline.loss.toFixed(3)}), accuracy ${r.accuracy.toFixed(3)} (bar ${GPT_BAR.accuracy}, unigram ${r.baseline.accuracy.toFixed(3)})`;
  check(r.loss <= GPT_BAR.loss && r.accuracy >= GPT_BAR.accuracy, `below the bar: ${line}`);
  check(r.lastLoss < 0.5 * r.firstLoss, `training loss fell only from ${r.firstLoss} to ${r.lastLoss}`);
}

/** The corpus' own ids, inline on the event loop (the tokenizer tests check the workers give the same). */
const corpusEncoder = { encode: (text: string) => corpusIds(text) };

/** Corpus documents as the text loader packs them: BOS and EOS added, 'concat' rows of `T`. */
function corpusLoader<const To extends 'cpu' | GPUDevice>(seed: number, documents: number, B: number, T: number, to: To) {
  return textLoader(
    { texts: corpusDocuments(seed, documents) },
    {
      seqLen: T,
      batchSize: B,
      pack: 'concat',
      bos: CORPUS_BOS,
      eos: CORPUS_EOS,
      tokenizer: corpusEncoder,
      vocabSize: CORPUS_VOCAB_SIZE,
      to,
    },
  );
}

/**
 * Trains the tiny preset from `textLoader` (corpus seed 1, batches straight into GPU buffers; 8
 * rows of 64 a step by default), then evaluates on corpus seed 2, never trained on.
 */
export async function gptLearnsCorpus(
  device: GPUDevice,
  o: {
    steps: number;
    batchSize?: number;
    train?: Partial<TrainConfig>;
    evalBatches?: number;
    /** Tokens of the greedy sample (default 40). */
    sampleTokens?: number;
    report?: (line: string) => void;
  },
): Promise<LearnResult> {
  const c = gptPresets.tiny;
  const B = o.batchSize ?? 8;
  const T = c.context;
  const evalBatches = o.evalBatches ?? 8;
  const start = performance.now();
  const train = { lr: 1e-2, minLr: 3e-4, warmupSteps: 20, totalSteps: o.steps, weightDecay: 0.01, clipNorm: 1, ...o.train };
  const trainer = await GptTrainer.create(device, { config: c, batchSize: B, train, seed: 1 });
  // ~190 tokens a document: enough documents for one epoch of `steps` batches.
  const documents = Math.ceil((o.steps * B * T) / 150);
  const data = corpusLoader(1, documents, B, T, device);
  let firstLoss = NaN;
  let lastLoss = NaN;
  try {
    let step = 0;
    for await (const batch of data) {
      const encoder = device.createCommandEncoder();
      trainer.step(encoder, batch);
      device.queue.submit([encoder.finish()]);
      batch.release();
      step++;
      if (step % 25 === 0 || step === o.steps) {
        const r = await trainer.readLoss();
        if (Number.isNaN(firstLoss)) firstLoss = r.loss;
        lastLoss = r.loss;
        const seconds = ((performance.now() - start) / 1000).toFixed(1);
        o.report?.(
          `step ${r.step}: loss ${r.loss.toFixed(3)} accuracy ${r.accuracy.toFixed(3)} lr ${r.lr.toExponential(2)} (${seconds} s)`,
        );
      }
      if (step === o.steps) break;
    }
    await data.close(); // its pipeline stops reading ahead before the evaluation starts
    check(step === o.steps, `the loader gave ${step} batches, not ${o.steps}`);
    const heldOutDocuments = Math.ceil((evalBatches * B * T) / 150);
    const heldOut = corpusLoader(2, heldOutDocuments, B, T, device);
    let evaluated = 0;
    for await (const batch of heldOut) {
      const encoder = device.createCommandEncoder();
      trainer.evaluate(encoder, batch);
      device.queue.submit([encoder.finish()]);
      batch.release();
      if (++evaluated === evalBatches) break;
    }
    await heldOut.close();
    const held = await trainer.evalReport();
    const labels: Int32Array[] = [];
    const cpu = corpusLoader(2, heldOutDocuments, B, T, 'cpu');
    for await (const batch of cpu) {
      labels.push(Int32Array.from(batch.labels));
      batch.release();
      if (labels.length === evalBatches) break;
    }
    await cpu.close();
    const prompt = 'the cats ';
    const ids = await trainer.complete([CORPUS_BOS, ...corpusIds(prompt)], o.sampleTokens ?? 40);
    return {
      loss: held.loss,
      accuracy: held.accuracy,
      baseline: unigramBaseline(labels, c.vocabSize),
      firstLoss,
      lastLoss,
      seconds: (performance.now() - start) / 1000,
      sample: prompt + corpusText(ids),
    };
  } finally {
    await data.close();
    trainer.close();
  }
}

/**
 * complete() is greedy over the last position's logits: each token is the reference's argmax for
 * the window so far; a checkpoint restores weights, moments and step, so the next steps match.
 */
export async function gptCompletesAndRestores(device: GPUDevice): Promise<void> {
  const c = gptStepConfig;
  const { B, ...batch } = mixedBatch();
  const init = initGptParams(c, 5, 0.5);
  const a = await GptTrainer.create(device, { config: c, batchSize: B, params: init });
  const b = await GptTrainer.create(device, { config: c, batchSize: B, seed: 9 });
  const buffers = deviceBatch(device, batch);
  try {
    const prompt = [0, 5, 7];
    const got = await a.complete(prompt, 7); // 3 + 7 > context 8: the window slides
    const ref = new ReferenceGpt(c);
    const params = Float64Array.from(init);
    const sequence = [...prompt];
    for (let k = 0; k < 7; k++) {
      const window = sequence.slice(-c.context);
      const n = window.length;
      const row = Array.from({ length: c.context }, (_, i) => i);
      const fwd = ref.forward(
        params,
        {
          inputs: row.map((i) => window[i] ?? 0),
          labels: row.map(() => -1),
          docIds: row.map((i) => (i < n ? 0 : -1)),
          positions: row,
        },
        1,
      );
      const last = fwd.logits.subarray((n - 1) * c.vocabSize, n * c.vocabSize);
      sequence.push(last.indexOf(Math.max(...last)));
    }
    assertEqual(got, sequence.slice(prompt.length), 'greedy completion against the reference');
    const sampled = await a.complete(prompt, 20, { temperature: 1, seed: 3 });
    assertEqual(await a.complete(prompt, 20, { temperature: 1, seed: 3 }), sampled, 'a seeded sample repeats');
    check(
      sampled.every((id) => Number.isInteger(id) && id >= 0 && id < c.vocabSize),
      'sampled ids in the vocabulary',
    );

    const steps = (t: GptTrainer, n: number) => {
      const encoder = device.createCommandEncoder();
      for (let i = 0; i < n; i++) t.step(encoder, buffers);
      device.queue.submit([encoder.finish()]);
    };
    steps(a, 2);
    b.loadCheckpoint(await a.saveCheckpoint());
    steps(a, 2);
    steps(b, 2);
    const [pa, pb] = [await a.readParams(), await b.readParams()];
    check(
      pa.every((v, i) => v === pb[i]),
      'a restored trainer steps to the same parameters',
    );
    const ra = await a.readLoss();
    check(ra.step === 4 && (await b.readLoss()).step === 4, `the optimizer step is restored (${ra.step})`);
    let refused = false;
    try {
      b.loadCheckpoint(new Uint8Array(12));
    } catch (error) {
      refused = (error as { code?: string }).code === 'malformed';
    }
    check(refused, 'a malformed checkpoint is a WeightsError (malformed)');
    const small = upload(device, new Int32Array(4));
    const optionError = (f: () => unknown, field: string) => {
      try {
        f();
      } catch (error) {
        return error instanceof OptionError && error.field === field;
      }
      return false;
    };
    check(
      optionError(() => a.step(device.createCommandEncoder(), { ...buffers, labels: small }), 'batch.labels'),
      'a batch buffer too small for [batchSize, context] is an OptionError naming it',
    );
    check(
      optionError(() => a.step(device.createCommandEncoder(), { ...buffers, shape: [B, c.context + 1] }), 'batch.shape'),
      'a batch of another shape is an OptionError',
    );
    const noCopy = device.createBuffer({ size: buffers.inputs.size, usage: 0x80 | 0x8 }); // STORAGE | COPY_DST
    check(
      optionError(() => a.step(device.createCommandEncoder(), { ...buffers, inputs: noCopy }), 'batch.inputs'),
      'a batch buffer without COPY_SRC is an OptionError',
    );
    small.destroy();
    noCopy.destroy();
    const rejects = async (p: Promise<unknown>, field: string) => {
      try {
        await p;
      } catch (error) {
        return error instanceof OptionError && error.field === field;
      }
      return false;
    };
    check(await rejects(a.complete([0, c.vocabSize], 1), 'promptIds[1]'), 'an id past the vocabulary is an OptionError');
    check(await rejects(a.complete([], 1), 'promptIds'), 'an empty prompt is an OptionError');
    check(await rejects(a.complete([0], 1, { temperature: -1 }), 'temperature'), 'a negative temperature is an OptionError');
    const shapeError = await GptTrainer.create(device, { config: { ...c, heads: 3 }, batchSize: B }).then(
      (t) => {
        t.close();
        return false;
      },
      (error: unknown) => error instanceof OptionError && error.field === 'heads',
    );
    check(shapeError, 'a config whose width is not a multiple of heads is an OptionError');
  } finally {
    a.close();
    b.close();
    for (const x of Object.values(buffers)) x.destroy();
  }
}
