import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DecodePool, type DecodePool as Pool } from '../../src/decode/index.ts';
import { mediaScenarios, type FixtureLoader } from '../shared/media-scenarios.ts';

// Compressed audio and video fixtures come from scripts/make-fixtures.sh (run by scripts/test.sh).
const load: FixtureLoader = async (name) => new Uint8Array(await readFile(new URL(`../fixtures/generated/${name}`, import.meta.url)));

describe('wasm audio and video decoding (Node)', () => {
  let pool: Pool;
  beforeAll(async () => {
    pool = await DecodePool.create({ threads: 2, maxInFlight: 4 });
  });
  afterAll(async () => {
    await pool.close();
  });

  for (const [title, body] of Object.entries(mediaScenarios)) it(title, () => body(pool, load));
});
