// Deno tier: every decode pool scenario (test/shared/decode-scenarios.ts) on a pool of each mode,
// and the scenarios that compare the modes. The fallback (single-threaded instances in workers)
// is forced here; pages without cross-origin isolation get it automatically.
import './limits.ts';
import { poolScenarios, withPool } from '../shared/decode-scenarios.ts';
import { modeScenarios } from '../shared/fallback-scenarios.ts';

const opts = { sanitizeOps: true, sanitizeResources: true };

for (const mode of ['pthreads', 'workers'] as const) {
  for (const [title, body] of Object.entries(poolScenarios)) {
    Deno.test({ name: `${mode} pool: ${title}`, ...opts, fn: () => withPool(2, body, mode) });
  }
}
for (const [title, body] of Object.entries(modeScenarios)) {
  Deno.test({
    name: `both pools: ${title}`,
    ...opts,
    fn: () => withPool(2, (threads) => withPool(2, (workers) => body(threads, workers), 'workers')),
  });
}
