// Node tier: the loader contract (test/shared/loader-contract-scenarios.ts) against loader(),
// videoLoader() and textLoader(), on one pthreads pool.
import { readdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import {
  contractScenarios,
  contractSubjects,
  openingFailureClosesWhatOpened,
  type ContractSubject,
} from '../shared/loader-contract-scenarios.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';

const load: FixtureLoader = async (name) => new Uint8Array(await readFile(new URL(`../fixtures/generated/${name}`, import.meta.url)));

let pool: DecodePool;
let subjects: ContractSubject[] = [];
beforeAll(async () => {
  pool = await DecodePool.create({ threads: 2 });
  subjects = await contractSubjects(pool, load);
});
afterAll(async () => {
  await pool.close();
});

for (const name of ['loader', 'videoLoader', 'textLoader'] as const) {
  describe(`loader contract: ${name}`, () => {
    for (const [scenario, body] of Object.entries(contractScenarios)) {
      it(scenario, () => {
        const subject = subjects.find((s) => s.name === name);
        if (!subject) throw new Error(`no subject ${name}`);
        return body(subject);
      });
    }
  });
}

describe('loader contract: opening fails part-way', () => {
  it('a GPU target below the limits fails the first for await, and the threads and workers opened before it are closed', () =>
    openingFailureClosesWhatOpened(load, async () => (await readdir('/proc/self/task')).length));
});
