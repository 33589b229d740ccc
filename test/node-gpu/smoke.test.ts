import { expect, it } from 'vitest';
import { normalizeMatchesCpu } from '../shared/gpu-scenarios.ts';

it('a WGSL dispatch on dawn (lavapipe) matches the CPU reference', async () => {
  const adapter = await normalizeMatchesCpu();
  expect(adapter).toMatch(/^node/);
});
