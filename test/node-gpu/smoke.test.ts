import { expect, it } from 'vitest';
import { augmentMatchesCpuAndIsDeterministic, normalizeMatchesCpu } from '../shared/gpu-scenarios.ts';

it('a WGSL dispatch on dawn (lavapipe) matches the CPU reference', async () => {
  const adapter = await normalizeMatchesCpu();
  expect(adapter).toMatch(/^node/);
});

it('GPU augmentation matches its CPU reference and is deterministic per seed', async () => {
  expect(await augmentMatchesCpuAndIsDeterministic()).toBeLessThan(1e-3);
});
