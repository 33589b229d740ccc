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

it('the other matmul kernels (tiled: 8×8 threads × 8×8, 16×16 × 4×4, 16×16 × 1×1; direct; tiled with small grids on direct) match the CPU reference too', async () => {
  const options: Parameters<typeof Kernels.create>[1][] = [
    { matmul: 'tiled' },
    // GPUs' default: the 70×45 products (2 tiles) tiled, the attention-shaped batches (1 tile) on the direct kernel.
    { matmul: 'tiled', smallGrid: 2 },
    { matmulTile: [16, 4] },
    { matmulTile: [16, 1] },
    { matmul: 'direct' },
  ];
  for (const option of options) {
    const k = await Kernels.create(gpu.device, option);
    try {
      if (option?.smallGrid) {
        // Which kernel a product of 2 tiles and one of 1 tile are given.
        const buffer = gpu.device.createBuffer({ size: 70 * 70 * 4, usage: GPUBufferUsage.STORAGE });
        const labels = [70, 45].map((M) => k.matmul({ a: buffer, b: buffer, c: buffer, M, N: 45, K: 37 }).label);
        buffer.destroy();
        expect(labels).toEqual(['mm.nn', 'mm.nn.small']);
      }
      const log = await matmulVariantsMatchCpu(gpu.device, k);
      console.log(`${JSON.stringify(option)} (${k.matmulKernel}): ${log.join('; ')}`);
    } finally {
      k.destroy();
    }
  }
});
