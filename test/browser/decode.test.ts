// Chromium tier (cross-origin isolated): every decode pool scenario (test/shared/decode-scenarios.ts)
// on a pthreads pool; decode-fallback.test.ts runs the same list on the workers fallback.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { poolScenarios } from '../shared/decode-scenarios.ts';

describe('wasm decode pool (Chromium, cross-origin isolated)', () => {
  let pool: DecodePool;
  beforeAll(async () => {
    pool = await DecodePool.create({ threads: 2 });
  });
  afterAll(async () => {
    await pool?.close();
  });

  for (const [title, body] of Object.entries(poolScenarios)) it(title, () => body(pool));
});
