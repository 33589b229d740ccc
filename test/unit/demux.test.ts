import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { demuxScenarios, streamedDemuxScenarios, workersRefuseByteSource, type FixtureLoader } from '../shared/demux-scenarios.ts';

// Node tier of DecodePool.demuxVideo, against ffprobe's packets (scripts/make-demux-reference.sh),
// on a pthreads pool and on the workers fallback.
const load: FixtureLoader = async (name) => new Uint8Array(await readFile(new URL(`../fixtures/generated/${name}`, import.meta.url)));

describe('demuxVideo (Node, pthreads)', () => {
  let pool: DecodePool;
  beforeAll(async () => {
    pool = await DecodePool.create({ threads: 2 });
  });
  afterAll(async () => {
    await pool?.close();
  });
  for (const [title, body] of Object.entries({ ...demuxScenarios, ...streamedDemuxScenarios }))
    it(title, { timeout: 60_000 }, () => body(pool, load));
});

describe('demuxVideo (Node, workers fallback)', () => {
  let pool: DecodePool;
  beforeAll(async () => {
    pool = await DecodePool.create({ threads: 1, mode: 'workers' });
  });
  afterAll(async () => {
    await pool?.close();
  });
  for (const [title, body] of Object.entries(demuxScenarios)) it(title, { timeout: 60_000 }, () => body(pool, load));
  it('a ByteSource is refused with a DecodeError; whole files demux', () => workersRefuseByteSource(pool, load));
});
