import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { checkBar, gptCompletesAndRestores, gptLearnsCorpus, gptStepMatchesCpu } from '../shared/gpt-scenarios.ts';

let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.close());

it('a GPT training step on packed documents matches the CPU reference', async () => {
  expect((await gptStepMatchesCpu(gpu.device)).length).toBeGreaterThan(40);
});

it('complete() is greedy over the last position, a checkpoint restores the run, bad input is an OptionError', async () => {
  await gptCompletesAndRestores(gpu.device);
});

// The bar itself, as in Node and Deno, on fewer tokens: SwiftShader runs a step of 8 rows in ~0.6 s
// (lavapipe ~0.12 s), so here 240 steps of 6 rows (92k tokens, ~2 min) instead of 250 of 8.
it('the tiny GPT learns the generated corpus to its bar (held-out next-character loss and accuracy)', async () => {
  const r = await gptLearnsCorpus(gpu.device, { steps: 240, batchSize: 6, report: (line) => console.log(`[gpt] ${line}`) });
  console.log(`[gpt] ${JSON.stringify(r)}`);
  checkBar(r);
}, 480_000);
