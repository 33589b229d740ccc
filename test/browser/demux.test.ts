import { describe, it } from 'vitest';
import { fetchFixture as load } from '../shared/browser-fixtures.ts';
import { demuxScenarios, streamedDemuxScenarios } from '../shared/demux-scenarios.ts';
import { usePool } from '../shared/use-pool.ts';

// Fixtures served by the vite dev server from test/fixtures/generated (scripts/make-fixtures.sh,
// which also writes ffprobe's packets beside each video).

describe('demuxVideo (Chromium, cross-origin isolated)', () => {
  const pool = usePool({ threads: 2 });
  for (const [title, body] of Object.entries({ ...demuxScenarios, ...streamedDemuxScenarios }))
    it(title, { timeout: 60_000 }, () => body(pool(), load));
});
