import { describe, it } from 'vitest';
import { demuxScenarios, streamedDemuxScenarios, workersRefuseByteSource } from '../shared/demux-scenarios.ts';
import { loadFixture as load } from '../shared/node-fixtures.ts';
import { usePool } from '../shared/use-pool.ts';

// Node tier of DecodePool.demuxVideo, against ffprobe's packets (scripts/make-demux-reference.sh),
// on a pthreads pool and on the workers fallback.

describe('demuxVideo (Node, pthreads)', () => {
  const pool = usePool({ threads: 2 });
  for (const [title, body] of Object.entries({ ...demuxScenarios, ...streamedDemuxScenarios }))
    it(title, { timeout: 60_000 }, () => body(pool(), load));
});

describe('demuxVideo (Node, workers fallback)', () => {
  const pool = usePool({ threads: 1, mode: 'workers' });
  for (const [title, body] of Object.entries(demuxScenarios)) it(title, { timeout: 60_000 }, () => body(pool(), load));
  it('a ByteSource is refused with a DecodeError; whole files demux', () => workersRefuseByteSource(pool(), load));
});
