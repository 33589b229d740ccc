// Deno tier: the loader contract (test/shared/loader-contract-scenarios.ts) against loader(),
// videoLoader() and textLoader(): one test per loader, its scenarios in turn on one pool.
import './limits.ts';
import { DecodePool } from '../../src/decode/index.ts';
import { denoWorkerThreads } from '../shared/cancel-scenarios.ts';
import { contractScenarios, contractSubjects, openingFailureClosesWhatOpened } from '../shared/loader-contract-scenarios.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';

const load: FixtureLoader = (name) => Deno.readFile(new URL(`../fixtures/generated/${name}`, import.meta.url));

for (const name of ['loader', 'videoLoader', 'textLoader'] as const) {
  Deno.test(`loader contract: ${name}: ${Object.keys(contractScenarios).length} scenarios`, async () => {
    const pool = await DecodePool.create({ threads: 2 });
    try {
      const subject = (await contractSubjects(pool, load)).find((s) => s.name === name);
      if (!subject) throw new Error(`no subject ${name}`);
      for (const [scenario, body] of Object.entries(contractScenarios)) {
        try {
          await body(subject);
        } catch (error) {
          throw new Error(`${name}: ${scenario}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        }
      }
    } finally {
      await pool.close();
    }
  });
}

Deno.test('loader contract: opening fails part-way: what opened before the failure is closed', async () => {
  const count = async () => {
    const n = await denoWorkerThreads();
    if (n === undefined) throw new Error('/proc/self/task is not readable: cannot count the workers');
    return n;
  };
  await openingFailureClosesWhatOpened(load, count);
});
