// `tandem parquet` (and writeParquet): what it writes, the loaders read back as the folder it came
// from. Node and Deno only: it writes files, and the command's code is not a page's.
import { runParquet } from '../../src/cli/parquet.ts';
import { textFileData } from '../../src/cli/text-data.ts';
import type { DecodePool } from '../../src/decode/index.ts';
import { loader } from '../../src/loader/index.ts';
import { makeDir, writeFileAtomic } from '../../src/runtime/index.ts';
import { textLoader, type TokenBatch } from '../../src/text/index.ts';
import { assertEqual, check } from './assert.ts';
import { collectImages, NAMES, OPTIONS } from './parquet-loader-scenarios.ts';
import { charEncoder } from './text-loader-scenarios.ts';
import { sampleImages } from './transfer-scenarios.ts';

/**
 * `tandem parquet` (runParquet, over writeParquet) writes a class folder as Hub-shaped files that
 * loader() reads back as the folder: the same images, labels and class names; with --text a folder
 * of documents that textLoader() packs as the same documents. Node and Deno (it writes files).
 */
export async function writtenParquetReadsAsTheFolder(pool: DecodePool, dir: string): Promise<void> {
  const images = sampleImages(14, 40);
  for (const folder of ['photos/cat', 'photos/dog', 'photos/bird', 'docs']) await makeDir(`${dir}/${folder}`);
  for (const [i, image] of images.entries()) {
    const cls = NAMES[i % 3] ?? 'cat';
    await writeFileAtomic(`${dir}/photos/${cls}/${String(i).padStart(2, '0')}.jpg`, image.bytes);
    await writeFileAtomic(
      `${dir}/docs/${String(i).padStart(2, '0')}.txt`,
      new TextEncoder().encode(`document ${i}: ${'words '.repeat(i)}`),
    );
  }
  const log: string[] = [];
  const flags = (o: Record<string, string>) => new Map(Object.entries(o));
  const code = await runParquet(
    flags({ data: `${dir}/photos`, out: `${dir}/pq`, 'rows-per-group': '4', 'rows-per-file': '9', compression: 'gzip' }),
    (l) => log.push(l),
  );
  check(code === 0, `tandem parquet exits 0 (${log.join(' | ')})`);
  const files = [`${dir}/pq/default/train/0000.parquet`, `${dir}/pq/default/train/0001.parquet`];
  await using fromParquet = loader({ parquet: files }, { ...OPTIONS, pool });
  const got = await collectImages(fromParquet);
  await using fromFolder = loader(`${dir}/photos`, { ...OPTIONS, pool });
  const want = await collectImages(fromFolder);
  assertEqual(got.labels, want.labels, 'the labels of the folder, in its order');
  assertEqual([...got.pixels.values()], [...want.pixels.values()], 'the pixels of the folder, in its order');
  assertEqual(await fromParquet.classes(), await fromFolder.classes(), "the folder's class names, from the ClassLabel metadata");
  check(got.failed.size === 0 && got.keys.length === 14, `14 rows, none failed (${got.keys.length}, ${got.failed.size})`);
  check(
    (await runParquet(flags({ data: `${dir}/docs`, out: `${dir}/pqt`, text: 'true' }), (l) => log.push(l))) === 0,
    'tandem parquet --text',
  );
  const options = { tokenizer: charEncoder, seqLen: 16, batchSize: 2, pack: 'concat' } as const;
  const rowsOf = async (data: AsyncIterable<TokenBatch>) => {
    const out: string[] = [];
    for await (const b of data) {
      out.push(b.inputs.join());
      b.release();
    }
    return out;
  };
  await using text = textLoader({ parquet: [`${dir}/pqt/default/train/0000.parquet`] }, options);
  await using folder = textLoader(`${dir}/docs`, options);
  assertEqual(await rowsOf(text), await rowsOf(folder), 'the text rows pack as the files do');
  check(
    (await runParquet(flags({ data: `${dir}/photos`, out: `${dir}/x`, compression: 'lzo' }), () => {})) === 2,
    'an unknown codec is a usage error',
  );
}
