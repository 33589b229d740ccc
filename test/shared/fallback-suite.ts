// The part of the decode-fallback test files that the Node (unit) and Chromium (browser) tiers
// share: a workers-mode pool and a pthreads pool for the enclosing describe block, every pool
// scenario on the workers pool and every mode scenario on both. No node: imports.
import { it } from 'vitest';
import type { DecodePool } from '../../src/decode/index.ts';
import { poolScenarios } from './decode-scenarios.ts';
import { modeScenarios } from './fallback-scenarios.ts';
import { usePools } from './use-pool.ts';

/** Registers the shared tests; the returned function gives the two pools inside a test. */
export function fallbackSuite(): () => { workers: DecodePool; threads: DecodePool } {
  const pools = usePools({ threads: 2, mode: 'workers' }, { threads: 2 });
  const both = () => {
    const [workers, threads] = pools;
    if (!workers || !threads) throw new Error('fallbackSuite: the pools are made in beforeAll');
    return { workers, threads };
  };
  for (const [title, body] of Object.entries(poolScenarios)) it(title, () => body(both().workers));
  for (const [title, body] of Object.entries(modeScenarios)) it(title, () => body(both().threads, both().workers));
  return both;
}
