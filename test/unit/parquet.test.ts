// Parquet datasets and the Hub's listings (Node): the shared scenarios against serveOnNode and a
// temporary folder.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, describe, test } from 'vitest';
import { serveOnNode as serve } from '../shared/node-serve.ts';
import { parquetScenarios } from '../shared/parquet-scenarios.ts';

const made: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(`${tmpdir()}/tandem-parquet-`);
  made.push(dir);
  return dir;
};
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

describe('Parquet datasets and the Hub (Node)', () => {
  for (const [name, body] of Object.entries(parquetScenarios(serve, tempDir))) test(name, body, 60_000);
});
