import { expect, it } from 'vitest';
import { normalizeMatchesCpu } from '../shared/gpu-scenarios.ts';

it('the page is cross-origin isolated (SharedArrayBuffer for wasm threads)', () => {
  expect(crossOriginIsolated).toBe(true);
  expect(typeof SharedArrayBuffer).toBe('function');
});

it('a WGSL dispatch on Chromium WebGPU matches the CPU reference', async () => {
  const adapter = await normalizeMatchesCpu();
  expect(adapter).toMatch(/^browser/);
});
