// Deno tier: timm-layout weights (scripts/make-timm-reference.py) give PyTorch's logits on the GPU,
// the exact-GELU training step matches the CPU reference, and fine-tuning with a new head learns.
import './limits.ts';
import { acquireGpu } from '../../src/gpu/index.ts';
import { fineTuneFromTimmWeights, timmLogitsMatchPytorch, type ReadFixture } from '../shared/timm-scenarios.ts';
import { timmStepConfig, trainingStepMatchesCpu } from '../shared/vit-scenarios.ts';

const read: ReadFixture = (name) => Deno.readFile(new URL(`../fixtures/generated/${name}`, import.meta.url));

Deno.test("timm-layout vit_tiny_patch16_224 weights give PyTorch's logits on the GPU, and fine-tune with a new head", async () => {
  const gpu = await acquireGpu();
  try {
    const { gpu: onGpu } = await timmLogitsMatchPytorch(read, gpu.device, false);
    console.log(`[timm] GPU logits vs PyTorch float64: max |diff| ${onGpu!.toExponential(2)}`);
    await trainingStepMatchesCpu(gpu.device, timmStepConfig);
    await fineTuneFromTimmWeights(gpu.device);
  } finally {
    gpu.close();
  }
});
