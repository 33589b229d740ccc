import { expect, it } from 'vitest';
import { augmentMatchesCpuAndIsDeterministic, normalizeMatchesCpu } from '../shared/gpu-scenarios.ts';

it('the page is cross-origin isolated (SharedArrayBuffer for wasm threads)', () => {
  expect(crossOriginIsolated).toBe(true);
  expect(typeof SharedArrayBuffer).toBe('function');
});

it('a WGSL dispatch on Chromium WebGPU matches the CPU reference', async () => {
  const adapter = await normalizeMatchesCpu();
  expect(adapter).toMatch(/^browser/);
});

it('GPU augmentation matches its CPU reference and is deterministic per seed', async () => {
  expect(await augmentMatchesCpuAndIsDeterministic()).toBeLessThan(1e-3);
});
