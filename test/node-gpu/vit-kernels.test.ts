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

it('the other matmul tile configurations (16×16 threads × 4×4, 16×16 × 1×1) match the CPU reference too', async () => {
  for (const matmulTile of [[16, 4], [16, 1]] as [number, number][]) {
    const k = await Kernels.create(gpu.device, { matmulTile });
    try {
      const log = await matmulVariantsMatchCpu(gpu.device, k);
      console.log(`tile ${matmulTile}: ${log.join('; ')}`);
    } finally {
      k.destroy();
    }
  }
});
