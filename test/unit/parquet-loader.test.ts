// Parquet and the Hub as loader sources (Node): test/shared/parquet-loader-scenarios.ts with files
// written to a temporary folder, the mock Hub on serveOnNode, one pthreads pool.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { serveOnNode } from '../shared/node-serve.ts';
import { parquetLoaderScenarios, type PlaceFile } from '../shared/parquet-loader-scenarios.ts';
import { writtenParquetReadsAsTheFolder } from '../shared/parquet-writer-scenarios.ts';

let dir = '';
let pool: DecodePool;
const place: PlaceFile = async (name, bytes) => {
  await writeFile(`${dir}/${name}`, bytes);
  return `${dir}/${name}`;
};
beforeAll(async () => {
  dir = await mkdtemp(`${tmpdir()}/tandem-parquet-loader-`);
  pool = await DecodePool.create({ threads: 2 });
});
afterAll(async () => {
  await pool?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('Parquet and the Hub as loader sources (Node)', () => {
  const scenarios = parquetLoaderScenarios(() => pool, place, serveOnNode);
  for (const [name, body] of Object.entries(scenarios)) test(name, body, 60_000);
});

test('tandem parquet writes a class folder (and --text a folder of documents) that the loaders read back as the folder', () =>
  writtenParquetReadsAsTheFolder(pool, dir));
