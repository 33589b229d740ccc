// Node tier: the loader contract (test/shared/loader-contract-scenarios.ts) against loader(),
// videoLoader() and textLoader(), on one pthreads pool (test/shared/contract-suite.ts).
import { readdir } from 'node:fs/promises';
import { describe, it } from 'vitest';
import { contractSuite } from '../shared/contract-suite.ts';
import { openingFailureClosesWhatOpened } from '../shared/loader-contract-scenarios.ts';
import { loadFixture as load } from '../shared/node-fixtures.ts';

contractSuite(load);

describe('loader contract: opening fails part-way', () => {
  it('a GPU target below the limits fails the first for await, and the threads and workers opened before it are closed', () =>
    openingFailureClosesWhatOpened(load, async () => (await readdir('/proc/self/task')).length));
});
