import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { Kernels } from '../../src/vit/kernels.ts';
import { kernelScenarios, matmulVariantsMatchCpu } from '../shared/vit-kernel-scenarios.ts';

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

for (const [name, scenario] of Object.entries(kernelScenarios)) {
  it(`${name} match the CPU reference within 1e-3 relative`, async () => {
    const log = await scenario(gpu.device, kernels);
    console.log(`${name}\n  ${log.join('\n  ')}`);
    expect(log.length).toBeGreaterThan(0);
  });
}

it('the default matmul on lavapipe is the direct kernel (no workgroup memory)', () => {
  expect(kernels.matmulKernel).toBe('direct');
});

it('the other matmul kernels (tiled: 8×8 threads × 8×8, 16×16 × 4×4, 16×16 × 1×1; direct) match the CPU reference too', async () => {
  const options: Parameters<typeof Kernels.create>[1][] = [
    { matmul: 'tiled' },
    { matmulTile: [16, 4] },
    { matmulTile: [16, 1] },
    { matmul: 'direct' },
  ];
  for (const option of options) {
    const k = await Kernels.create(gpu.device, option);
    try {
      const log = await matmulVariantsMatchCpu(gpu.device, k);
      console.log(`${JSON.stringify(option)} (${k.matmulKernel}): ${log.join('; ')}`);
    } finally {
      k.destroy();
    }
  }
});
