// Parquet datasets and the Hub's listings (Node): the shared scenarios against serveOnNode and a
// temporary folder.
import { describe, test } from 'vitest';
import { serveOnNode as serve } from '../shared/node-serve.ts';
import { parquetScenarios } from '../shared/parquet-scenarios.ts';
import { useTempDirs } from '../shared/node-temp-dirs.ts';

const tempDir = useTempDirs('tandem-parquet-');

describe('Parquet datasets and the Hub (Node)', () => {
  for (const [name, body] of Object.entries(parquetScenarios(serve, tempDir))) test(name, body, 60_000);
});
