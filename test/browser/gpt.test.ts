import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { gptCompletesAndRestores, gptStepMatchesCpu } from '../shared/gpt-scenarios.ts';

let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.close());

it('a GPT training step on packed documents matches the CPU reference', async () => {
  const log = await gptStepMatchesCpu(gpu.device);
  console.log(log.at(-1));
  expect(log.length).toBeGreaterThan(40);
});

it('complete() is greedy over the last position, a checkpoint restores the run, bad input is an OptionError', async () => {
  await gptCompletesAndRestores(gpu.device);
});

// The learning bar (gptLearnsCorpus, checkBar) runs in the node-gpu and Deno tiers, on lavapipe: the
// step above matching the CPU reference is what Chromium adds, and SwiftShader took about 100 s
// for a smaller run of the bar.
