import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { presets } from '../../src/vit/config.ts';
import { Kernels } from '../../src/vit/kernels.ts';
import { kernelScenarios } from '../shared/vit-kernel-scenarios.ts';
import { trainingStepMatchesCpu, trainSynthetic } from '../shared/vit-scenarios.ts';

let gpu: GpuContext;
let kernels: Kernels;
beforeAll(async () => {
  gpu = await acquireGpu();
  kernels = await Kernels.create(gpu.device);
});
afterAll(() => {
  kernels?.destroy();
  gpu?.close();
});

it('ViT kernels match the CPU reference (SwiftShader)', async () => {
  for (const scenario of Object.values(kernelScenarios)) {
    await scenario(gpu.device, kernels);
  }
});

it('a whole training step matches the CPU reference', async () => {
  await trainingStepMatchesCpu(gpu.device);
});

it('tiny ViT: the loss falls on separable synthetic data', async () => {
  const r = await trainSynthetic(gpu.device, presets.tiny, 20, false);
  expect(r.losses.at(-1)!).toBeLessThan(0.8 * r.losses[0]!);
});
