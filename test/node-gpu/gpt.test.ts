import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { gptCompletesAndRestores, gptStepMatchesCpu } from '../shared/gpt-scenarios.ts';

let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.close());

it('a GPT training step on packed documents and padding (logits, loss, every gradient, AdamW) matches the CPU reference within a few times the measured error, and a GELU or LayerNorm-eps slip would not', async () => {
  const log = await gptStepMatchesCpu(gpu.device);
  console.log(log.join('\n'));
  expect(log.length).toBeGreaterThan(40);
});

it('complete() is greedy over the last position (against the reference), seeded sampling repeats, a checkpoint restores the run, bad input is an OptionError', async () => {
  await gptCompletesAndRestores(gpu.device);
});
