// Node tier: the decoder robustness scenarios (test/shared/robustness.ts), the pool's own on both
// pool modes.
import { readFile } from 'node:fs/promises';
import { describe, it } from 'vitest';
import type { FixtureLoader } from '../shared/media-scenarios.ts';
import { inputRobustness, poolRobustness } from '../shared/robustness.ts';

const load: FixtureLoader = async (name) => new Uint8Array(await readFile(new URL(`../fixtures/generated/${name}`, import.meta.url)));

describe('decoder robustness (Node)', () => {
  for (const mode of ['pthreads', 'workers'] as const) {
    for (const [title, body] of Object.entries(poolRobustness(load, mode))) it(`${title} (${mode})`, body, 120_000);
  }
  for (const [title, body] of Object.entries(inputRobustness(load, { seed: 0x5eed, perSeed: 200 }))) it(title, body, 300_000);
});
