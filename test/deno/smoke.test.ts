// Deno tier: the same scenario bodies as the other tiers, run by `deno test`.
import './limits.ts';
import { augmentMatchesCpuAndIsDeterministic, normalizeMatchesCpu } from '../shared/gpu-scenarios.ts';

Deno.test('a WGSL dispatch on Deno WebGPU matches the CPU reference', async () => {
  const adapter = await normalizeMatchesCpu();
  if (!adapter.startsWith('deno')) throw new Error(`unexpected runtime: ${adapter}`);
});

Deno.test('GPU augmentation matches its CPU reference and is deterministic per seed', async () => {
  await augmentMatchesCpuAndIsDeterministic();
});
