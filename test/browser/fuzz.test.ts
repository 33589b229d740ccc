// Chromium tier: the decoder robustness scenarios (test/shared/robustness.ts) on a pthreads pool.
import { describe, it } from 'vitest';
import type { FixtureLoader } from '../shared/media-scenarios.ts';
import { inputRobustness, poolRobustness } from '../shared/robustness.ts';

// Served by the vite dev server from test/fixtures (generated/ is made by scripts/make-fixtures.sh).
const load: FixtureLoader = async (name) => {
  const response = await fetch(`/test/fixtures/generated/${name}`);
  if (!response.ok) throw new Error(`fixture ${name}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
};

describe('decoder robustness (Chromium)', () => {
  const scenarios = { ...poolRobustness(load, 'pthreads'), ...inputRobustness(load, { seed: 0xc405, perSeed: 40 }) };
  for (const [title, body] of Object.entries(scenarios)) it(title, body, 300_000);
});
