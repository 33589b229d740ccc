// Parquet datasets and the Hub's listings (Node): the shared scenarios against serveOnNode and a
// temporary folder; and the open files a dataset of many local files holds, from /proc.
import { readdirSync, writeFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { openParquetDataset } from '../../src/parquet/index.ts';
import { hyparquetFile, table } from '../shared/parquet-files.ts';
import { serveOnNode as serve } from '../shared/node-serve.ts';
import { parquetScenarios } from '../shared/parquet-scenarios.ts';
import { useTempDirs } from '../shared/node-temp-dirs.ts';

const tempDir = useTempDirs('tandem-parquet-');

describe('Parquet datasets and the Hub (Node)', () => {
  for (const [name, body] of Object.entries(parquetScenarios(serve, tempDir))) test(name, body, 60_000);
});

test('a dataset of 200 local files holds no file open between reads (no running out of file handles)', async () => {
  const dir = await tempDir();
  const bytes = hyparquetFile(table(6), { rowGroupSize: 3 });
  const paths = Array.from({ length: 200 }, (_, i) => {
    const path = `${dir}/part-${String(i).padStart(3, '0')}.parquet`;
    writeFileSync(path, bytes);
    return path;
  });
  const openFiles = () => readdirSync('/proc/self/fd').length;
  const before = openFiles();
  const dataset = await openParquetDataset(paths);
  try {
    expect(dataset.rowGroups.length).toBe(400);
    expect(openFiles() - before).toBeLessThan(8);
    const groups = await Promise.all(dataset.rowGroups.map((_, g) => dataset.readRowGroup(g, ['id'])));
    expect(groups.reduce((n, g) => n + g.rows, 0)).toBe(1200);
    expect(openFiles() - before).toBeLessThan(8);
  } finally {
    await dataset.close();
  }
});
