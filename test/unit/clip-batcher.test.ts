// Node tier: VideoClipBatcher on a pthreads pool (test/shared/clip-batcher-scenarios.ts).
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { clipBatcherScenarios } from '../shared/clip-batcher-scenarios.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';

const load: FixtureLoader = async (name) => new Uint8Array(await readFile(new URL(`../fixtures/generated/${name}`, import.meta.url)));

describe('VideoClipBatcher (Node)', () => {
  let pool: DecodePool;
  beforeAll(async () => {
    pool = await DecodePool.create({ threads: 2 });
  });
  afterAll(async () => {
    await pool.close();
  });
  for (const [title, body] of Object.entries(clipBatcherScenarios)) it(title, () => body(pool, load));
});
