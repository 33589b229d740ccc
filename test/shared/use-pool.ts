// Decode pools for a vitest describe block (or a whole file), shared by the Node (unit) and
// Chromium (browser) tiers: created in beforeAll, closed in afterAll. No node: imports, so the
// browser tier can load it.
import { afterAll, beforeAll } from 'vitest';
import { DecodePool, type DecodePoolOptions } from '../../src/decode/index.ts';

/**
 * Pools made in the enclosing block's beforeAll, one per options object and in that order, and
 * closed in its afterAll in the same order. The array is filled in place: index it inside a test.
 */
export function usePools(...options: DecodePoolOptions[]): DecodePool[] {
  const pools: DecodePool[] = [];
  beforeAll(async () => {
    for (const o of options) pools.push(await DecodePool.create(o));
  });
  afterAll(async () => {
    for (const pool of pools.splice(0)) await pool.close();
  });
  return pools;
}

/** One pool for the enclosing block (default: 2 pthreads); call the returned function inside a test or a later hook. */
export function usePool(options: DecodePoolOptions = { threads: 2 }): () => DecodePool {
  const pools = usePools(options);
  return () => {
    const pool = pools[0];
    if (!pool) throw new Error('usePool: the pool is made in beforeAll; ask for it inside a test or a later hook');
    return pool;
  };
}
