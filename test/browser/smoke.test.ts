import { expect, it } from 'vitest';
import { gpuScenarios } from '../shared/gpu-scenarios.ts';

it('the page is cross-origin isolated (SharedArrayBuffer for wasm threads)', () => {
  expect(crossOriginIsolated).toBe(true);
  expect(typeof SharedArrayBuffer).toBe('function');
});

for (const [title, body] of Object.entries(gpuScenarios('browser'))) it(title, body);
