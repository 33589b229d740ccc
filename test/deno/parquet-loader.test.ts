// Deno tier: Parquet and the Hub as loader sources (test/shared/parquet-loader-scenarios.ts), files
// in a temporary folder, the mock Hub on Deno.serve, one pthreads pool per scenario.
import './limits.ts';
import { DecodePool } from '../../src/decode/index.ts';
import { parquetLoaderScenarios, type PlaceFile } from '../shared/parquet-loader-scenarios.ts';
import { writtenParquetReadsAsTheFolder } from '../shared/parquet-writer-scenarios.ts';
import { serveOnDeno as serve } from '../shared/deno-serve.ts';

let pool: DecodePool | undefined;
const dir = await Deno.makeTempDir({ prefix: 'tandem-parquet-loader-' });
const place: PlaceFile = async (name, bytes) => {
  await Deno.writeFile(`${dir}/${name}`, bytes);
  return `${dir}/${name}`;
};
const poolOf = () => {
  if (!pool) throw new Error('no pool');
  return pool;
};

for (const [name, body] of Object.entries(parquetLoaderScenarios(poolOf, place, serve))) {
  Deno.test(`parquet loader: ${name}`, async () => {
    pool = await DecodePool.create({ threads: 2 });
    try {
      await body();
    } finally {
      await pool.close();
    }
  });
}
Deno.test('parquet loader: tandem parquet writes a folder the loaders read back as the folder', async () => {
  const p = await DecodePool.create({ threads: 2 });
  try {
    await writtenParquetReadsAsTheFolder(p, dir);
  } finally {
    await p.close();
  }
});

globalThis.addEventListener('unload', () => Deno.removeSync(dir, { recursive: true }));
