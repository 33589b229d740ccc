// Chromium tier: every decode pool scenario on the workers fallback, and the scenarios that compare
// the modes. This page is cross-origin isolated, so the fallback is forced here; the demo's
// end-to-end test loads a page without isolation, where DecodePool picks it by itself.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { poolScenarios } from '../shared/decode-scenarios.ts';
import { modeScenarios } from '../shared/fallback-scenarios.ts';

describe('fallback decode pool: single-threaded instances in module workers (Chromium)', () => {
  let workers: DecodePool;
  let threads: DecodePool;
  beforeAll(async () => {
    workers = await DecodePool.create({ threads: 2, mode: 'workers' });
    threads = await DecodePool.create({ threads: 2 });
  });
  afterAll(async () => {
    await workers?.close();
    await threads?.close();
  });

  for (const [title, body] of Object.entries(poolScenarios)) it(title, () => body(workers));
  for (const [title, body] of Object.entries(modeScenarios)) it(title, () => body(threads, workers));
});
