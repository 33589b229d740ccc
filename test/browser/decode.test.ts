// Chromium tier (cross-origin isolated): every decode pool scenario (test/shared/decode-scenarios.ts)
// on a pthreads pool; decode-fallback.test.ts runs the same list on the workers fallback.
import { describe, it } from 'vitest';
import { poolScenarios } from '../shared/decode-scenarios.ts';
import { usePool } from '../shared/use-pool.ts';

describe('wasm decode pool (Chromium, cross-origin isolated)', () => {
  const pool = usePool({ threads: 2 });

  for (const [title, body] of Object.entries(poolScenarios)) it(title, () => body(pool()));
});
