// Deno tier: the ViT kernels and a whole training step against the CPU reference, and a short
// run on separable synthetic data whose loss must fall.
import './limits.ts';
import { acquireGpu } from '../../src/gpu/index.ts';
import { presets } from '../../src/vit/config.ts';
import { Kernels } from '../../src/vit/kernels.ts';
import { kernelScenarios } from '../shared/vit-kernel-scenarios.ts';
import { checkpointRoundTrip, trainingStepMatchesCpu, trainSynthetic } from '../shared/vit-scenarios.ts';

Deno.test('ViT kernels, a whole training step and checkpoints match the CPU reference', async () => {
  const gpu = await acquireGpu();
  const kernels = await Kernels.create(gpu.device);
  try {
    for (const scenario of Object.values(kernelScenarios)) {
      await scenario(gpu.device, kernels);
    }
    await trainingStepMatchesCpu(gpu.device);
    await checkpointRoundTrip(gpu.device);
  } finally {
    kernels.destroy();
    gpu.close();
  }
});

Deno.test('tiny ViT: the loss falls on separable synthetic data', async () => {
  const gpu = await acquireGpu();
  try {
    const r = await trainSynthetic(gpu.device, presets.tiny, 30, false);
    if (!(r.losses.at(-1)! < 0.7 * r.losses[0]!)) throw new Error(`loss did not fall: ${r.losses.join(' ')}`);
  } finally {
    gpu.close();
  }
});
