// GPT scenarios, runtime-neutral (each throws on failure): a training step on the GPU against the
// f64 reference (logits, loss, every gradient, one AdamW update) on rows that pack several
// documents and padding, and learning the generated corpus to its bar (docs/gpt.md).
import type { TrainConfig } from '../../src/vit/config.ts';
import { adamwStep } from '../../src/vit/reference.ts';
import { type GptConfig, initGptParams } from '../../src/gpt/config.ts';
import { GptTrainer } from '../../src/gpt/model.ts';
import { ReferenceGpt, type ReferenceBatch } from '../../src/gpt/reference.ts';
import { check } from './assert.ts';
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
 * One training step on the GPU vs the reference, within 1e-3 relative each. Also checks that the
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
    const report = await trainer.lossReport();
    const fwd = ref.forward(params, batch, B);
    check(report.tokens === fwd.count && fwd.count === 18, `labelled positions: GPU ${report.tokens}, reference ${fwd.count}, want 18`);
    const logits = await trainer.logits();
    close('logits', logits, fwd.logits, 1e-3, log);
    close('loss', [report.loss], [fwd.loss], 1e-3, log);
    close('accuracy', [report.accuracy * report.tokens], [fwd.correct], 0, log);
    const unmasked = ref.forward(params, { ...batch, docIds: Array.from(batch.docIds, () => 0) }, B);
    const sensitivity = relErr(logits, unmasked.logits);
    log.push(`logits against a reference ignoring documents: ${sensitivity.toExponential(2)}`);
    check(sensitivity > 1e-2, `the document mask changes the logits by only ${sensitivity}: the check could not tell`);
    const grads = ref.backward(params, fwd, B);
    const got = await trainer.gradients();
    for (const t of ref.layout.tensors) close(`grad ${t.name}`, ref.view(got, t.name), ref.view(grads, t.name), 1e-3, log);
    const state = { m: new Float64Array(params.length), v: new Float64Array(params.length), step: 0 };
    const before = Float64Array.from(params);
    // AdamW on the GPU's own gradients (checked above): Adam's 1/√v turns f32 noise of a tiny
    // gradient into a whole ±lr step, as the ViT's scenario explains.
    const lr = adamwStep(params, Float64Array.from(got), state, trainer.train, ref.layout.decayEnd);
    close('lr', [report.lr], [lr], 1e-3, log);
    close('grad norm', [report.gradNorm], [Math.hypot(...grads)], 1e-3, log);
    const after = await trainer.params();
    for (const t of ref.layout.tensors) {
      const want = ref.view(params, t.name).map((v, i) => v - before[t.offset + i]!);
      const have = ref.view(after, t.name).map((v, i) => v - before[t.offset + i]!);
      close(`update ${t.name}`, have, want, 1e-3, log);
    }
  } finally {
    trainer.close();
    for (const b of Object.values(buffers)) b.destroy();
  }
  return log;
}
