import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { presets } from '../../src/vit/config.ts';
import { Kernels } from '../../src/vit/kernels.ts';
import { kernelScenarios } from '../shared/vit-kernel-scenarios.ts';
import { timmLogitsMatchPytorch, type ReadFixture } from '../shared/timm-scenarios.ts';
import { timmStepConfig, trainingStepMatchesCpu, trainSynthetic } from '../shared/vit-scenarios.ts';

// Served by the vite dev server from test/fixtures/generated (made by scripts/make-fixtures.sh).
const read: ReadFixture = async (name) => {
  const response = await fetch(`/test/fixtures/generated/${name}`);
  if (!response.ok) throw new Error(`fixture ${name}: HTTP ${response.status}; run scripts/make-fixtures.sh`);
  return new Uint8Array(await response.arrayBuffer());
};

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

// Fine-tuning from loaded weights is run by the Node and Deno tiers (50 s here on lavapipe).
it("timm-layout vit_tiny_patch16_224 weights give PyTorch's logits on the GPU; the exact-GELU step matches the CPU", async () => {
  const { gpu: onGpu } = await timmLogitsMatchPytorch(read, gpu.device, false);
  console.log(`[timm] GPU logits vs PyTorch float64: max |diff| ${onGpu!.toExponential(2)}`);
  expect((await trainingStepMatchesCpu(gpu.device, timmStepConfig)).length).toBeGreaterThan(100);
}, 300_000);
