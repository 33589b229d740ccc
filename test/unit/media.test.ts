import { describe, it } from 'vitest';
import { mediaScenarios } from '../shared/media-scenarios.ts';
import { loadFixture as load } from '../shared/node-fixtures.ts';
import { usePool } from '../shared/use-pool.ts';

// Compressed audio and video fixtures come from scripts/make-fixtures.sh (run by scripts/test.sh).

describe('wasm audio and video decoding (Node)', () => {
  const pool = usePool({ threads: 2, maxInFlight: 4 });

  for (const [title, body] of Object.entries(mediaScenarios)) it(title, () => body(pool(), load));
});
