import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { checkpointRoundTrip, timmStepConfig, trainingStepMatchesCpu } from '../shared/vit-scenarios.ts';

let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.close());

it('two whole training steps (loss, every gradient, every AdamW update) match the CPU reference within 1e-3', async () => {
  const log = await trainingStepMatchesCpu(gpu.device);
  const worst = log
    .map((l) => [l, Number(l.split(': ')[1])] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5);
  console.log(`${log.length} comparisons; worst:\n  ${worst.map((w) => w[0]).join('\n  ')}`);
  expect(log.length).toBeGreaterThan(100);
});

it("with timm's exact GELU and LayerNorm epsilon, two training steps match the CPU reference within 1e-3", async () => {
  expect((await trainingStepMatchesCpu(gpu.device, timmStepConfig)).length).toBeGreaterThan(100);
});

it('a checkpoint restores weights, optimizer moments and step exactly', async () => {
  await checkpointRoundTrip(gpu.device);
});
