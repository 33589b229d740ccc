// Node tier: every decode pool scenario (test/shared/decode-scenarios.ts) on a pthreads pool; the
// workers fallback runs the same list in decode-fallback.test.ts.
import { describe, expect, it } from 'vitest';
import { patternJpeg, poolScenarios } from '../shared/decode-scenarios.ts';
import { usePool } from '../shared/use-pool.ts';

describe('wasm decode pool (Node)', () => {
  const poolOf = usePool({ threads: 2, maxInFlight: 4 });

  for (const [title, body] of Object.entries(poolScenarios)) it(title, () => body(poolOf()));
  it('reports its mode and counts (one decode and one failure more, whatever ran before)', async () => {
    const pool = poolOf();
    const before = pool.stats();
    const target = pool.malloc(32 * 32 * 3);
    try {
      await pool.decodeInto(patternJpeg(64, 48).bytes, target, { width: 32, height: 32 });
      await expect(pool.decodeInto(new Uint8Array([1, 2, 3]), target, { width: 32, height: 32 })).rejects.toThrow(/unknown-format/);
    } finally {
      pool.free(target);
    }
    const after = pool.stats();
    expect(after.mode).toBe('pthreads');
    expect(after.completed - before.completed).toBe(1);
    expect(after.failed - before.failed).toBe(1);
    expect(after.inFlight).toBe(0);
  });
});
