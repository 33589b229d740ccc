// Node tier: VideoClipBatcher on a pthreads pool (test/shared/clip-batcher-scenarios.ts).
import { describe, it } from 'vitest';
import { clipBatcherScenarios } from '../shared/clip-batcher-scenarios.ts';
import { loadFixture as load } from '../shared/node-fixtures.ts';
import { usePool } from '../shared/use-pool.ts';

describe('VideoClipBatcher (Node)', () => {
  const pool = usePool({ threads: 2 });
  for (const [title, body] of Object.entries(clipBatcherScenarios)) it(title, () => body(pool(), load));
});
