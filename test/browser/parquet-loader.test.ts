// Chromium tier: Parquet and the Hub as loader sources (test/shared/parquet-loader-scenarios.ts),
// files given as Files, the mock Hub behind 127.0.0.1 relay servers (test/browser-setup/), one
// pthreads pool.
import { afterAll, beforeAll, describe, test } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { relayServe } from '../browser-setup/serve.ts';
import { parquetLoaderScenarios, type PlaceFile } from '../shared/parquet-loader-scenarios.ts';

let pool: DecodePool;
const place: PlaceFile = async (name, bytes) => new File([bytes.slice()], name);
beforeAll(async () => {
  pool = await DecodePool.create({ threads: 2 });
});
afterAll(async () => {
  await pool?.close();
});

describe('Parquet and the Hub as loader sources (Chromium)', () => {
  const scenarios = parquetLoaderScenarios(() => pool, place, relayServe);
  for (const [name, body] of Object.entries(scenarios)) test(name, body, 120_000);
});
