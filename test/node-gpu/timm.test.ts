import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { fineTuneFromTimmWeights, timmLogitsMatchPytorch, type ReadFixture } from '../shared/timm-scenarios.ts';

const read: ReadFixture = async (name) => new Uint8Array(await readFile(new URL(`../fixtures/generated/${name}`, import.meta.url)));

let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.close());

it("timm-layout vit_tiny_patch16_224 weights give PyTorch's logits on the GPU", async () => {
  // The CPU reference's own comparison runs in the unit tier.
  const { gpu: onGpu } = await timmLogitsMatchPytorch(read, gpu.device, false);
  console.log(`[timm] GPU logits vs PyTorch float64: max |diff| ${onGpu!.toExponential(2)}`);
}, 180_000);

it('fine-tuning from timm-layout weights with a new head: the loss falls', async () => {
  const losses = await fineTuneFromTimmWeights(gpu.device);
  console.log(`[timm] fine-tune losses ${losses.map((l) => l.toFixed(3)).join(' ')}`);
}, 180_000);
