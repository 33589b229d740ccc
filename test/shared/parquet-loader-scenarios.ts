// Parquet and the Hub as sources of the loaders (src/loader/parquet.ts): the rows of Hub-shaped
// files (an Image struct, a ClassLabel with its names in the `huggingface` metadata) become the
// same batches as the same images given as a list; every row is delivered or reported under its
// key (`file#row`); row groups are shuffled, shared out by rank, resumed and regrouped as shards
// are; text rows give the token batches the same documents give in memory; a Hub dataset named
// `{ hf, split }` resolves through the mock Hub. Runtime-neutral: the tier says how a file is
// given (a path in Node and Deno, a File in browsers) and how to serve.
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { DecodePool } from '../../src/decode/index.ts';
import { OptionError, TandemError } from '../../src/errors/index.ts';
import { Rng } from '../../src/random/index.ts';
import type { ImageBatch } from '../../src/decode/index.ts';
import { type Loader, loader, type LoaderState } from '../../src/loader/index.ts';
import { loadParquetShards } from '../../src/loader/internal.ts';
import { regroupShardStates, SourceError } from '../../src/sources/index.ts';
import { textLoader, type TokenBatch } from '../../src/text/index.ts';
import { assertEqual, check, rejectsWith, within } from './assert.ts';
import { mutate } from './fuzz-scenarios.ts';
import { bytesServed, serveMockHub } from './hub-server.ts';
import { hyparquetImageFile } from './parquet-files.ts';
import type { Serve } from './sources-scenarios.ts';
import { charEncoder } from './text-loader-scenarios.ts';
import { sampleImages } from './transfer-scenarios.ts';

/** How the tier hands a file to the loader: a path it wrote (Node, Deno) or a File (browsers). */
export type PlaceFile = (name: string, bytes: Uint8Array) => Promise<string | Blob>;

export const NAMES = ['cat', 'dog', 'bird'];

interface ImageRows {
  bytes: (Uint8Array | null)[];
  labels: number[];
}

/** `count` photos-like JPEGs (`size` pixels square) with labels r % 3; row 7 has no bytes, row 11 is not an image. */
function imageRows(count: number, offset = 0, size = 48): ImageRows {
  const images = sampleImages(count + offset, size).slice(offset);
  const bytes: (Uint8Array | null)[] = images.map((x) => x.bytes);
  if (count > 11) {
    bytes[7] = null;
    bytes[11] = new TextEncoder().encode('<html>not an image</html>');
  }
  return { bytes, labels: images.map((_, r) => (r + offset) % 3) };
}

/** A Hub-shaped image file: `image` as the Image struct `{ bytes, path }`, `label` a ClassLabel (cat, dog, bird). */
export function hubImageFile(rows: ImageRows, rowGroupSize: number): Uint8Array {
  const image = rows.bytes.map((bytes, r) => ({ bytes, path: `img${r}.jpg` }));
  return hyparquetImageFile({ image, label: rows.labels }, rowGroupSize);
}

function textFile(texts: readonly string[], rowGroupSize: number): Uint8Array {
  return new Uint8Array(parquetWriteBuffer({ columnData: [{ name: 'text', data: [...texts], type: 'STRING' }], rowGroupSize }));
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

interface Seen {
  keys: string[];
  labels: number[];
  /** Each delivered row's pixels, by key. */
  pixels: Map<string, string>;
  failed: Map<string, string>;
}

export async function collectImages(data: Loader<ImageBatch>, limit = Infinity): Promise<Seen> {
  const seen: Seen = { keys: [], labels: [], pixels: new Map(), failed: new Map() };
  let n = 0;
  for await (const batch of data) {
    const rowBytes = batch.data.length / batch.count;
    batch.keys.forEach((key, i) => {
      seen.keys.push(key);
      seen.labels.push(batch.labels[i] ?? -1);
      seen.pixels.set(key, batch.data.subarray(i * rowBytes, (i + 1) * rowBytes).join());
    });
    batch.release();
    if (++n >= limit) break;
  }
  for (const f of data.failures()) seen.failed.set(f.key, `${f.stage}:${(f.error as { code?: string }).code}`);
  return seen;
}

export const OPTIONS = { batchSize: 4, size: 16 } as const;

/** `poolOf` gives the tier's pool when a scenario runs (tiers make it in a hook, after registering). */
export const parquetLoaderScenarios = (
  poolOf: () => DecodePool,
  place: PlaceFile,
  serve: Serve | undefined,
): Record<string, () => Promise<void>> => ({
  async 'loader(): Hub-shaped image rows are the same batches as the images as a list; bad rows fail under file#row'() {
    const rows = imageRows(23);
    const file = await place('pics.parquet', hubImageFile(rows, 5));
    const name = typeof file === 'string' ? file : (file as File).name;
    await using data = loader({ parquet: [file] }, { ...OPTIONS, pool: poolOf() });
    const got = await collectImages(data);
    const list = rows.bytes.flatMap((bytes, r) => (bytes ? [{ bytes, label: rows.labels[r] ?? -1, key: `${name}#${r}` }] : []));
    await using reference = loader(list, { ...OPTIONS, pool: poolOf() });
    const want = await collectImages(reference);
    assertEqual(got.keys, want.keys, 'the rows in file order, keyed file#row');
    assertEqual(got.labels, want.labels, 'labels from the ClassLabel column');
    for (const key of want.keys) check(got.pixels.get(key) === want.pixels.get(key), `${key}: the pixels of the same image as a list`);
    assertEqual(await data.classes(), NAMES, 'class names from the huggingface metadata');
    assertEqual([...got.failed.keys()].sort(), [`${name}#11`, `${name}#7`], 'the row without bytes and the row that is not an image');
    check(got.failed.get(`${name}#7`)?.startsWith('read:unsupported-type'), `row 7: ${got.failed.get(`${name}#7`)}`);
    check(got.failed.get(`${name}#11`)?.startsWith('decode:'), `row 11: ${got.failed.get(`${name}#11`)}`);
    check(got.keys.length + got.failed.size === 23, 'every row delivered or reported');
  },

  async 'loader(): rows without a class are delivered unlabelled (-1): no label column, a null or -1 label; a caption is never taken for the label'() {
    const pics = sampleImages(6, 48).map((x) => x.bytes);
    const captioned = await place(
      'captioned.parquet',
      new Uint8Array(
        parquetWriteBuffer({
          columnData: [
            { name: 'id', data: [10, 11, 12, 13, 14, 15], type: 'INT32' },
            { name: 'caption', data: ['a cat', 'a dog', 'a bird', 'a cat', 'a fish', 'a dog'], type: 'STRING' },
            { name: 'image', data: pics, type: 'BYTE_ARRAY' },
          ],
          rowGroupSize: 4,
        }),
      ),
    );
    await using plain = loader({ parquet: [captioned] }, { ...OPTIONS, pool: poolOf() });
    const got = await collectImages(plain);
    assertEqual(got.labels, [-1, -1, -1, -1, -1, -1], 'no label column: every row unlabelled, none of id or caption taken as its class');
    check(got.failed.size === 0, `no row lost: ${[...got.failed.values()].join(', ')}`);
    assertEqual(await plain.classes(), [], 'no classes');
    const testSplit = await place(
      'test-split.parquet',
      new Uint8Array(
        parquetWriteBuffer({
          columnData: [
            { name: 'image', data: pics, type: 'BYTE_ARRAY' },
            { name: 'label', data: [2, -1, null, 0, -1, 1], type: 'INT32' },
          ],
          rowGroupSize: 6,
        }),
      ),
    );
    await using marked = loader({ parquet: [testSplit] }, { ...OPTIONS, pool: poolOf() });
    const unlabelled = await collectImages(marked);
    assertEqual(unlabelled.labels, [2, -1, -1, 0, -1, 1], 'a -1 or null label is unlabelled, the rest keep theirs');
    check(unlabelled.failed.size === 0, `no row lost: ${[...unlabelled.failed.values()].join(', ')}`);
    // Named, a caption is still a label: its strings are the classes.
    await using byName = loader({ parquet: [captioned], label: 'caption' }, { ...OPTIONS, pool: poolOf() });
    const named = await collectImages(byName);
    assertEqual(named.labels, [1, 2, 0, 1, 3, 2], 'the named string column: ids in sorted order');
    assertEqual(await byName.classes(), ['a bird', 'a cat', 'a dog', 'a fish'], 'its classes');
  },

  async 'loader(): row groups shuffled and shared out by rank, every row once per epoch; state() resumes; other files refused'() {
    const files = [await place('a.parquet', hubImageFile(imageRows(10), 3)), await place('b.parquet', hubImageFile(imageRows(7, 10), 4))];
    const options = { ...OPTIONS, pool: poolOf(), shuffle: true, seed: 4, epochs: 2, source: undefined } as const;
    const per: string[][] = [];
    for (const rank of [0, 1]) {
      await using data = loader({ parquet: files, shuffleBuffer: 5 }, { ...options, rank, worldSize: 2 });
      per.push((await collectImages(data)).keys);
    }
    const all = [...(per[0] ?? []), ...(per[1] ?? [])];
    check(new Set(all).size === 17, `17 rows across the ranks (${new Set(all).size})`);
    check(all.length === 34, `each row once per epoch (${all.length} deliveries for 2 epochs)`);
    await using whole = loader({ parquet: files, shuffleBuffer: 5 }, options);
    const wholeKeys = (await collectImages(whole)).keys;
    check(wholeKeys.slice(0, 17).join() !== [...wholeKeys.slice(0, 17)].sort().join(), 'the rows are shuffled');
    await using first = loader({ parquet: files, shuffleBuffer: 5 }, options);
    const head = (await collectImages(first, 3)).keys;
    const state = JSON.parse(JSON.stringify(first.state())) as LoaderState;
    await using rest = loader({ parquet: files, shuffleBuffer: 5 }, { ...options, resumeFrom: state });
    const tail = (await collectImages(rest)).keys;
    assertEqual([...head, ...tail], wholeKeys, 'resumed from the JSON state: the run that never stopped');
    await using other = loader({ parquet: [files[0] ?? ''], shuffleBuffer: 5 }, { ...options, resumeFrom: state });
    await rejectsWith(
      collectImages(other),
      (e) => e instanceof OptionError && e.field === 'resumeFrom',
      'a state over other files is refused',
    );
  },

  async 'loader(): after break the next for await continues at the consumer, and so does a state() taken then'() {
    const file = await place('parted.parquet', hubImageFile(imageRows(20), 4));
    const options = { ...OPTIONS, pool: poolOf(), shuffle: true, seed: 4 };
    await using whole = loader({ parquet: [file] }, options);
    const all = (await collectImages(whole)).keys;
    await using parted = loader({ parquet: [file] }, options);
    const head = (await collectImages(parted, 2)).keys;
    const state = JSON.parse(JSON.stringify(parted.state()));
    const tail = (await collectImages(parted)).keys;
    assertEqual([...head, ...tail], all, 'break after two batches, then for await: the rows of one pass, in its order');
    await using resumed = loader({ parquet: [file] }, { ...options, resumeFrom: state });
    assertEqual((await collectImages(resumed)).keys, tail, 'a new loader from the state taken at the break');
  },

  async 'loader(): two ranks stopped mid-epoch regroup to three: every row of the epoch delivered once'() {
    const files = [await place('r1.parquet', hubImageFile(imageRows(9), 2)), await place('r2.parquet', hubImageFile(imageRows(8, 9), 3))];
    const options = { ...OPTIONS, pool: poolOf(), shuffle: true, seed: 8 } as const;
    const source = { parquet: files, shuffleBuffer: 3 };
    const done: string[] = [];
    const states: LoaderState[] = [];
    for (const rank of [0, 1]) {
      await using data = loader(source, { ...options, rank, worldSize: 2 });
      done.push(...(await collectImages(data, 1 + rank)).keys);
      states.push(JSON.parse(JSON.stringify(data.state())) as LoaderState);
    }
    const regrouped = regroupShardStates(
      states.map((s) => s.shards ?? ({} as never)),
      3,
    );
    for (const [rank, shards] of regrouped.entries()) {
      await using data = loader(source, { ...options, rank, worldSize: 3, resumeFrom: { kind: 'tandem.loader', version: 1, shards } });
      done.push(...(await collectImages(data)).keys);
    }
    check(
      done.length === 17 && new Set(done).size === 17,
      `17 rows once each across the stop (${done.length}, ${new Set(done).size} distinct)`,
    );
  },

  async 'textLoader(): Parquet text rows give the token batches of the same documents in memory'() {
    const texts = Array.from({ length: 30 }, (_, i) => `row ${i}: ${'the quick brown fox '.repeat(1 + (i % 4))}`);
    const file = await place('docs.parquet', textFile(texts, 7));
    const options = { tokenizer: charEncoder, seqLen: 24, batchSize: 3, bos: 0, eos: 1, pack: 'best-fit' } as const;
    const rowsOf = async (data: AsyncIterable<TokenBatch>) => {
      const out: string[] = [];
      for await (const b of data) {
        out.push(`${b.inputs.join()}|${b.labels.join()}|${b.docIds.join()}`);
        b.release();
      }
      return out;
    };
    await using fromParquet = textLoader({ parquet: [file] }, options);
    await using inMemory = textLoader({ texts }, options);
    assertEqual(await rowsOf(fromParquet), await rowsOf(inMemory), 'the same rows, labels and document ids');
  },

  async 'a Hub dataset by name ({ hf, split }) and by hf:// path reads through the mock Hub, Range requests only'() {
    if (!serve) throw new Error('this tier serves no HTTP');
    const rows = imageRows(12);
    const bytes = hubImageFile(rows, 4);
    const served = await serveMockHub(serve);
    try {
      served.hub.repos.set('owner/pics', { revisions: { 'refs/convert/parquet': { 'default/train/0000.parquet': bytes } } });
      const fetch = { retries: 1, backoffMs: 10, timeoutMs: 5000 };
      await using byName = loader({ hf: 'owner/pics', split: 'train', endpoint: served.endpoint }, { ...OPTIONS, pool: poolOf(), fetch });
      const got = await collectImages(byName);
      check(got.keys.length === 10 && got.failed.size === 2, `10 rows delivered, 2 reported (${got.keys.length}, ${got.failed.size})`);
      check(
        got.keys.every((k) => k.includes('/datasets/owner/pics/resolve/refs%2Fconvert%2Fparquet/default/train/0000.parquet#')),
        `keys name the resolve URL and the row (${got.keys[0]})`,
      );
      assertEqual(await byName.classes(), NAMES, 'class names from the metadata');
      await using byPath = loader(
        { hf: 'hf://datasets/owner/pics@refs%2Fconvert%2Fparquet/default/train/0000.parquet', endpoint: served.endpoint },
        { ...OPTIONS, pool: poolOf(), fetch },
      );
      assertEqual((await collectImages(byPath)).labels, got.labels, 'the hf:// path reads the same rows');
      await rejectsWith(
        collectImages(loader({ hf: 'owner/missing', split: 'train', endpoint: served.endpoint }, { ...OPTIONS, pool: poolOf(), fetch })),
        (e) => (e as { code?: string }).code === 'not-found',
        'a dataset the Hub does not have is not-found',
      );
    } finally {
      await served.close();
    }
  },

  async 'the row group the shard stream reads next is read ahead (one at most), and close() stops it'() {
    if (!serve) throw new Error('this tier serves no HTTP');
    const served = await serveMockHub(serve);
    try {
      served.hub.repos.set('owner/ahead', {
        // Images large enough that the row groups read lie before the file's last 64 KiB, which opening it read.
        revisions: { 'refs/convert/parquet': { 'default/train/0000.parquet': hubImageFile(imageRows(12, 0, 320), 3) } },
      });
      const open = await loadParquetShards();
      const parquet = await open({ hf: 'owner/ahead', split: 'train', endpoint: served.endpoint }, 'image', {}, 'test');
      const requests = () => [...served.hub.served].reduce((n, [key, c]) => n + (key.startsWith('owner/ahead') ? c.requests : 0), 0);
      try {
        const [first, second, third] = parquet.shards;
        check(first && second && third && parquet.shards.length === 4, `4 row groups (${parquet.shards.length})`);
        for await (const _ of parquet.reader(first, 0, undefined)) break;
        const before = requests();
        parquet.prefetch(second);
        parquet.prefetch(second); // the same hint twice reads it once
        let after = requests();
        for (let i = 0; i < 100 && after === before; i++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          after = requests();
        }
        check(after > before, 'the hinted row group is being read before the stream asks for it');
        await new Promise((resolve) => setTimeout(resolve, 200));
        const settled = requests();
        const rows: string[] = [];
        for await (const item of parquet.reader(second, 0, undefined)) rows.push(item.key);
        assertEqual(rows, ['3', '4', '5'], 'the read-ahead row group gives its rows');
        check(requests() === settled, `taken from the read ahead, not read again (${requests()} requests, ${settled} when read ahead)`);
        parquet.prefetch(third);
      } finally {
        await parquet.close();
      }
    } finally {
      await served.close();
    }
  },

  async 'loader() over HTTP reads each row group once in an epoch, the next one read ahead while the last is consumed'() {
    if (!serve) throw new Error('this tier serves no HTTP');
    const served = await serveMockHub(serve);
    try {
      // 40 rows of 160-pixel photos-like JPEGs in row groups of 5: a file well past the first read of its tail.
      const photos = sampleImages(40, 160);
      const file = hubImageFile({ bytes: photos.map((p) => p.bytes), labels: photos.map((_, r) => r % 3) }, 5);
      served.hub.repos.set('owner/once', { revisions: { 'refs/convert/parquet': { 'default/train/0000.parquet': file } } });
      await using data = loader({ hf: 'owner/once', split: 'train', endpoint: served.endpoint }, { ...OPTIONS, pool: poolOf() });
      const seen = await collectImages(data);
      check(seen.keys.length === 40, `${seen.keys.length} rows`);
      const bytes = bytesServed(served.hub, 'owner/once');
      // The footer's tail read (64 KiB) and every row group once; a row group read twice (a read
      // ahead dropped before it was taken) would serve about the file again.
      check(bytes <= file.length + 65536, `${bytes} bytes served for a ${file.length}-byte file: a row group was read more than once`);
    } finally {
      await served.close();
    }
  },

  async 'seeded mutational fuzz: 300 mutants of a Hub-shaped file (footer, page headers, data) through loader(): typed errors only, no hang, no row twice'() {
    const original = hubImageFile(imageRows(16), 3);
    const footerLength = new DataView(original.buffer, original.byteOffset).getUint32(original.length - 8, true);
    const footerStart = original.length - 8 - footerLength;
    const rng = new Rng(20261205);
    const outcomes = { opened: 0, refused: 0, rowsDelivered: 0, failures: 0 };
    for (let m = 0; m < 300; m++) {
      // Half the mutants edit the footer alone (the structure), half the whole file (page headers and data).
      const bytes =
        m % 2 === 0 ? concat(original.subarray(0, footerStart), mutate(original.subarray(footerStart), rng)) : mutate(original, rng);
      const file = await place(`fuzz-${m}.parquet`, bytes);
      const data = loader({ parquet: [file] }, { ...OPTIONS, pool: poolOf(), failureBudget: { maxFailureRate: 1 } });
      try {
        const seen = await within(collectImages(data), 20_000, `mutant ${m}`);
        outcomes.opened++;
        outcomes.rowsDelivered += seen.keys.length;
        outcomes.failures += seen.failed.size;
        check(new Set(seen.keys).size === seen.keys.length, `mutant ${m}: a row delivered twice`);
        for (const f of data.failures())
          check(f.error instanceof TandemError, `mutant ${m}: ${f.key} failed with ${String(f.error)}, not a typed error`);
      } catch (error) {
        check(error instanceof TandemError, `mutant ${m}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
        outcomes.refused++;
      } finally {
        await data.close();
      }
    }
    console.log(`[parquet fuzz] ${JSON.stringify(outcomes)}`);
    check(outcomes.opened > 30 && outcomes.refused > 30, `both outcomes seen: ${JSON.stringify(outcomes)}`);
  },

  async 'a column that is not there, or of the wrong type, is an OptionError naming it before any row is read'() {
    const file = await place('cols.parquet', hubImageFile(imageRows(3), 3));
    await rejectsWith(
      collectImages(loader({ parquet: [file], image: 'photo' }, { ...OPTIONS, pool: poolOf() })),
      (e) => e instanceof OptionError && e.field === 'source.image',
      'a missing image column',
    );
    await rejectsWith(
      collectImages(loader({ parquet: [file], image: 'label' }, { ...OPTIONS, pool: poolOf() })),
      (e) => e instanceof OptionError && e.field === 'source.image' && String(e.message).includes('integer'),
      'an integer column as the image',
    );
    check(new SourceError('unsupported-type', 'k', 'm') instanceof SourceError, 'SourceError is the row failure type');
  },
});
