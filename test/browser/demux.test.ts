import { afterAll, beforeAll, describe, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { demuxScenarios, streamedDemuxScenarios, type FixtureLoader } from '../shared/demux-scenarios.ts';

// Served by the vite dev server from test/fixtures/generated (scripts/make-fixtures.sh, which also
// writes ffprobe's packets beside each video).
const load: FixtureLoader = async (name) => {
  const response = await fetch(`/test/fixtures/generated/${name}`);
  if (!response.ok) throw new Error(`fixture ${name}: HTTP ${response.status}; run scripts/make-fixtures.sh`);
  return new Uint8Array(await response.arrayBuffer());
};

describe('demuxVideo (Chromium, cross-origin isolated)', () => {
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
