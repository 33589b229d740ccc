// Parquet datasets and Hub datasets against files written by two independent writers (hyparquet-
// writer, and arrow-rs's writer as parquet-wasm) and a mock Hub on 127.0.0.1. Shared by the Node and
// Deno tiers, which supply the server (`serve`) and a temporary folder (`tempDir`), and by the
// Chromium tier, whose files are Files and whose server is relayed (test/browser-setup/).
import { parquetWriteBuffer } from 'hyparquet-writer';
import {
  classLabelNames,
  hfPathToUrl,
  HubError,
  hubFeatures,
  openParquetDataset,
  type ParquetDataset,
  ParquetError,
  resolveHubDataset,
} from '../../src/parquet/index.ts';
import { writeFileAtomic } from '../../src/runtime/index.ts';
import { FetchError } from '../../src/sources/index.ts';
import { assertEqual, check, rejectsWith, within } from './assert.ts';
import {
  arrowFile,
  arrowImageFile,
  COLUMNS,
  hyparquetFile,
  hyparquetImageFile,
  IMAGE_FEATURES,
  images,
  pageKinds,
  type Table,
  table,
  withChunkUncompressed,
  withGroupRows,
} from './parquet-files.ts';
import { bytesServed, type MockHub, serveMockHub } from './hub-server.ts';
import type { PlaceFile } from './parquet-loader-scenarios.ts';
import type { Serve } from './sources-scenarios.ts';

// ---- Checks ----

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Every row of the dataset, column by column, in row-group order. */
async function readAll(dataset: ParquetDataset, columns: readonly string[]): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = Object.fromEntries(columns.map((c) => [c, []]));
  for (let i = 0; i < dataset.rowGroups.length; i++) {
    const group = await dataset.readRowGroup(i, columns);
    check(group.rows === dataset.rowGroups[i]!.rows, `row group ${i}: ${group.rows} rows, the table says ${dataset.rowGroups[i]!.rows}`);
    for (const c of columns) {
      const values = group.column(c);
      check(values.length === group.rows, `row group ${i}, ${c}: ${values.length} values for ${group.rows} rows`);
      out[c]!.push(...values);
    }
  }
  return out;
}

/** The dataset holds exactly `t` (ids as numbers, binaries as Uint8Array with the same bytes). */
function checkTable(got: Record<string, unknown[]>, t: Table, what: string): void {
  assertEqual(got.id, t.id.map(Number), `${what}: id`);
  assertEqual(got.label, t.label, `${what}: label`);
  assertEqual(got.text, t.text, `${what}: text`);
  assertEqual(got.score, t.score, `${what}: score`);
  assertEqual(got.flag, t.flag, `${what}: flag`);
  const blobs = got.blob ?? [];
  check(blobs.length === t.blob.length, `${what}: ${blobs.length} blobs`);
  t.blob.forEach((expected, i) => {
    const value = blobs[i];
    if (expected === null) {
      check(value === null, `${what}: blob ${i} should be null`);
      return;
    }
    check(value instanceof Uint8Array, `${what}: blob ${i} is ${typeof value}, not a Uint8Array (binary decoded as text?)`);
    check(sameBytes(value, expected), `${what}: blob ${i} bytes differ`);
  });
}

const isParquetError = (file: string | Blob, codes?: string[]) => (error: unknown) =>
  error instanceof ParquetError && error.file === nameOf(file) && (codes === undefined || codes.includes(error.code));

/**
 * Where a scenario's files go: a fresh folder, whose files are read by path (Node, Deno), or the
 * tier's own placing (browsers: a File of the same bytes). Names are unique within a scenario.
 */
export type ParquetFiles = (() => Promise<string>) | { place: PlaceFile };

/** One scenario's placing of its files. */
async function placer(files: ParquetFiles): Promise<PlaceFile> {
  if (typeof files !== 'function') return files.place;
  const dir = await files();
  return async (name, bytes) => {
    const path = `${dir}/${name}`;
    await writeFileAtomic(path, bytes);
    return path;
  };
}

/** The name a dataset gives a placed file: its path, or the File's name. */
const nameOf = (input: string | Blob) => (typeof input === 'string' ? input : (input as File).name);

async function withHub(serve: Serve, body: (hub: MockHub, endpoint: string) => Promise<void>): Promise<void> {
  const served = await serveMockHub(serve);
  try {
    await body(served.hub, served.endpoint);
  } finally {
    await served.close();
  }
}

/** Opens the dataset, reads every row group's every column; resolves on success, rejects with the failure. */
async function openAndReadAll(inputs: (string | Blob)[], options: Parameters<typeof openParquetDataset>[1] = {}): Promise<void> {
  const dataset = await openParquetDataset(inputs, options);
  try {
    await readAll(
      dataset,
      [...dataset.columns].filter(([, kind]) => kind !== 'other').map(([name]) => name),
    );
  } finally {
    await dataset.close();
  }
}

const FAST = { retries: 1, backoffMs: 10, timeoutMs: 5000 };

export const parquetScenarios = (serve: Serve, placing: ParquetFiles): Record<string, () => Promise<void>> => ({
  async 'the row-group table spans files from both writers, footers read once'() {
    const put = await placer(placing);
    const a = table(10);
    const b = table(7, 10);
    const first = await put('a.parquet', hyparquetFile(a, { rowGroupSize: 4 }));
    const second = await put('b.parquet', await arrowFile(b, { rowGroupSize: 3 }));
    const dataset = await openParquetDataset([first, second]);
    try {
      assertEqual(dataset.files, [nameOf(first), nameOf(second)], 'files');
      assertEqual(
        dataset.rowGroups,
        [
          { file: 0, group: 0, rows: 4, firstRow: 0 },
          { file: 0, group: 1, rows: 4, firstRow: 4 },
          { file: 0, group: 2, rows: 2, firstRow: 8 },
          { file: 1, group: 0, rows: 3, firstRow: 0 },
          { file: 1, group: 1, rows: 3, firstRow: 3 },
          { file: 1, group: 2, rows: 1, firstRow: 6 },
        ],
        'row groups',
      );
      check(dataset.rows === 17, `rows ${dataset.rows}`);
      assertEqual(
        [...dataset.columns],
        [
          ['id', 'integer'],
          ['label', 'integer'],
          ['text', 'string'],
          ['blob', 'binary'],
          ['score', 'float'],
          ['flag', 'boolean'],
        ],
        'column kinds',
      );
      check(dataset.features === undefined, 'no huggingface metadata, no features');
      const got = await readAll(dataset, COLUMNS);
      checkTable(got, table(17), 'both files');
      const together = await Promise.all(dataset.rowGroups.map((_, i) => dataset.readRowGroup(i, ['id', 'blob'])));
      assertEqual(
        together.flatMap((g) => g.column('id')),
        got.id,
        'row groups read at once',
      );
      const one = await dataset.readRowGroup(4, ['text']);
      assertEqual(one.column('text'), b.text.slice(3, 6), 'one group, one column');
      await rejectsWith(
        Promise.resolve().then(() => one.column('id')),
        isParquetError(second, ['column']),
        'a column not read',
      );
      // A file: URL names a local file; a browser has none (its files are Files).
      if (typeof first === 'string') {
        const byUrl = await openParquetDataset([new URL(`file://${first}`).href]);
        check(byUrl.rows === 10 && byUrl.files[0]?.startsWith('file:') === true, 'a file: URL opens the file, under its URL');
        await byUrl.close();
      }
    } finally {
      await dataset.close();
    }
  },

  async 'every compression codec reads back, from both writers'() {
    const put = await placer(placing);
    const t = table(23);
    const files: Array<[string, Uint8Array]> = [
      ['hy-snappy', hyparquetFile(t, { rowGroupSize: 10 })],
      ['hy-none', hyparquetFile(t, { rowGroupSize: 10, codec: 'UNCOMPRESSED' })],
    ];
    for (const codec of ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'BROTLI', 'ZSTD', 'LZ4_RAW'] as const)
      files.push([`arrow-${codec}`, await arrowFile(t, { rowGroupSize: 10, codec })]);
    for (const [name, bytes] of files) {
      const path = await put(`${name}.parquet`, bytes);
      const dataset = await openParquetDataset([path]);
      try {
        checkTable(await readAll(dataset, COLUMNS), t, name);
      } finally {
        await dataset.close();
      }
    }
  },

  async 'data pages v1 and v2, dictionary and plain encodings'() {
    const put = await placer(placing);
    const t = table(40);
    for (const pageVersion of [1, 2] as const) {
      for (const dictionary of [true, false]) {
        const name = `v${pageVersion}-${dictionary ? 'dict' : 'plain'}`;
        const bytes = await arrowFile(t, { rowGroupSize: 16, pageVersion, dictionary, codec: 'ZSTD' });
        // The file has the pages this case is about (a writer that changed its defaults would not).
        const kinds = pageKinds(bytes);
        check(
          kinds.some((k) => k.startsWith(pageVersion === 1 ? 'DATA_PAGE:' : 'DATA_PAGE_V2:')),
          `${name}: ${kinds}`,
        );
        check(kinds.some((k) => k.startsWith('DICTIONARY_PAGE')) === dictionary, `${name}: ${kinds}`);
        const path = await put(`${name}.parquet`, bytes);
        const dataset = await openParquetDataset([path]);
        try {
          checkTable(await readAll(dataset, COLUMNS), t, name);
        } finally {
          await dataset.close();
        }
      }
    }
  },

  async 'binary columns stay Uint8Array, from a path, a File and a Blob'() {
    const put = await placer(placing);
    const t = table(12);
    const bytes = await arrowFile(t, { rowGroupSize: 5 });
    const path = await put('blobs.parquet', bytes);
    const file = new File([bytes.slice()], 'picked.parquet');
    const blob = new Blob([hyparquetFile(t, { rowGroupSize: 5 }).slice()]);
    const dataset = await openParquetDataset([path, file, blob]);
    try {
      assertEqual(dataset.files, [nameOf(path), 'picked.parquet', 'blob #2'], 'display names');
      const got = await readAll(dataset, ['blob']);
      for (let copy = 0; copy < 3; copy++) {
        const part = got.blob!.slice(copy * 12, (copy + 1) * 12);
        checkTable(
          { ...got, blob: part, id: t.id.map(Number), label: t.label, text: t.text, score: t.score, flag: t.flag },
          t,
          `copy ${copy}`,
        );
      }
      // Values are views of their page's decoded buffer (no copy per value): one kept past the row
      // group, or transferred alone, is copied by the caller (docs/sources.md).
      check(
        got.blob?.every((v) => v === null || v instanceof Uint8Array),
        'binary values are Uint8Array views',
      );
    } finally {
      await dataset.close();
    }
  },

  async 'an Image struct column gives each row its bytes, and ClassLabel names come from the metadata'() {
    const put = await placer(placing);
    const t = images(9, 300);
    const fromArrow = await put('arrow-images.parquet', await arrowImageFile(t, { rowGroupSize: 4, metadata: IMAGE_FEATURES }));
    const fromHy = await put('hy-images.parquet', hyparquetImageFile(t, 4));
    for (const input of [fromArrow, fromHy]) {
      const path = nameOf(input);
      const dataset = await openParquetDataset([input]);
      try {
        assertEqual(
          [...dataset.columns],
          [
            ['image', 'image'],
            ['label', 'integer'],
          ],
          `${path}: kinds`,
        );
        assertEqual(classLabelNames(dataset.features, 'label'), ['cat', 'dog', 'bird'], `${path}: label names`);
        check(classLabelNames(dataset.features, 'image') === undefined, 'an Image is not a ClassLabel');
        check(dataset.features?.image?._type === 'Image', 'the Image feature');
        const got = await readAll(dataset, ['image', 'label']);
        assertEqual(got.label, t.label, `${path}: labels`);
        t.image.forEach((expected, i) => {
          const value = got.image![i];
          if (!expected?.bytes) {
            check(value === null, `${path}: image ${i} should be null`);
            return;
          }
          check(value instanceof Uint8Array && sameBytes(value, expected.bytes), `${path}: image ${i} bytes`);
        });
      } finally {
        await dataset.close();
      }
    }
  },

  async 'features: the huggingface metadata forms, and files without them'() {
    const nested = JSON.stringify({
      info: {
        features: {
          labels: { feature: { names: ['a', 'b'], _type: 'ClassLabel' }, _type: 'Sequence' },
          tags: { feature: { names: ['x'], _type: 'ClassLabel' }, _type: 'List' },
          listed: [{ names: ['p', 'q'], _type: 'ClassLabel' }],
          struct: { inner: { dtype: 'string', _type: 'Value' } },
          text: { dtype: 'string', _type: 'Value' },
        },
      },
    });
    const features = hubFeatures(nested);
    assertEqual(classLabelNames(features, 'labels'), ['a', 'b'], 'Sequence(ClassLabel)');
    assertEqual(classLabelNames(features, 'tags'), ['x'], 'List(ClassLabel)');
    assertEqual(classLabelNames(features, 'listed'), ['p', 'q'], 'a list form');
    check(classLabelNames(features, 'text') === undefined, 'a Value has no names');
    check(classLabelNames(features, 'struct') === undefined, 'a struct has no names');
    check(classLabelNames(features, 'missing') === undefined, 'no such column');
    for (const bad of [undefined, '', 'not json', '[]', '{"info": 3}', '{"features": {}}'])
      check(hubFeatures(bad) === undefined, `no features from ${String(bad)}`);
    check(classLabelNames(undefined, 'label') === undefined, 'no features, no names');
  },

  async 'integers beyond 2^53, missing columns and unread types fail column, naming the file'() {
    const put = await placer(placing);
    const big = new Uint8Array(
      parquetWriteBuffer({
        columnData: [
          { name: 'id', data: [1n, 2n ** 60n, 3n], type: 'INT64' },
          { name: 'when', data: [new Date(0), new Date(1), new Date(2)] },
        ],
      }),
    );
    const bigPath = await put('big.parquet', big);
    const other = await put('other.parquet', new Uint8Array(parquetWriteBuffer({ columnData: [{ name: 'when', data: [new Date(5)] }] })));
    const dataset = await openParquetDataset([bigPath, other]);
    try {
      check(dataset.columns.get('when') === 'other', 'a timestamp is other');
      await rejectsWith(dataset.readRowGroup(0, ['id']), isParquetError(bigPath, ['column']), 'an INT64 over 2^53');
      await rejectsWith(dataset.readRowGroup(0, ['when']), isParquetError(bigPath, ['column']), 'a timestamp column');
      await rejectsWith(dataset.readRowGroup(0, ['nope']), isParquetError(bigPath, ['column']), 'no such column');
      const missing = await rejectsWith(dataset.readRowGroup(1, ['id']), isParquetError(other, ['column']), 'a file without the column');
      check(String((missing as Error).message).includes("'id'"), `the message names the column: ${(missing as Error).message}`);
    } finally {
      await dataset.close();
    }
    await rejectsWith(dataset.readRowGroup(0, ['id']), isParquetError(bigPath, ['open']), 'a read after close');
  },

  async 'broken files: truncated, flipped footers, sizes over the limits, all ParquetErrors naming the file'() {
    const put = await placer(placing);
    const good = await arrowFile(table(30), { rowGroupSize: 10, codec: 'SNAPPY' });
    const size = good.length;
    const footerLength = new DataView(good.buffer, good.byteOffset).getUint32(size - 8, true);
    // Cut anywhere: before the data, in the data, in the footer, in its length word and magic.
    for (const cut of [
      0,
      3,
      4,
      11,
      12,
      100,
      Math.floor(size / 2),
      size - footerLength - 8,
      size - footerLength,
      size - 9,
      size - 5,
      size - 1,
    ]) {
      const path = await put(`cut-${cut}.parquet`, good.slice(0, cut));
      await within(rejectsWith(openAndReadAll([path]), isParquetError(path, ['footer']), `cut at ${cut}`), 10_000, `cut at ${cut}`);
    }
    // A length word pointing outside the file, and one over the limit.
    const outside = good.slice();
    new DataView(outside.buffer).setUint32(size - 8, size + 10, true);
    const outsidePath = await put('outside.parquet', outside);
    await rejectsWith(openAndReadAll([outsidePath]), isParquetError(outsidePath, ['footer']), 'a footer length outside the file');
    const goodPath = await put('good.parquet', good);
    await rejectsWith(
      openAndReadAll([goodPath], { maxFooterBytes: footerLength - 1 }),
      isParquetError(goodPath, ['limit']),
      'maxFooterBytes',
    );
    await openAndReadAll([goodPath], { maxFooterBytes: footerLength });
    await rejectsWith(openAndReadAll([goodPath], { maxColumnChunkBytes: 64 }), isParquetError(goodPath, ['limit']), 'maxColumnChunkBytes');
    // Garbage over the footer's start (its thrift field headers) never parses.
    const garbage = good.slice();
    garbage.fill(0xff, size - 8 - footerLength, size - 8 - footerLength + 16);
    const garbagePath = await put('garbage.parquet', garbage);
    await rejectsWith(openAndReadAll([garbagePath]), isParquetError(garbagePath, ['footer']), 'a garbled footer');
    // Any one byte of the footer flipped: a ParquetError or the right rows, never another error, never a hang.
    for (let at = size - 8 - footerLength; at < size - 8; at += 3) {
      const flipped = good.slice();
      flipped[at]! ^= 0xff;
      const path = await put('flipped.parquet', flipped);
      await within(
        openAndReadAll([path]).catch((error: unknown) => check(isParquetError(path)(error), `flip at ${at}: ${String(error)}`)),
        10_000,
        `flip at ${at}`,
      );
    }
    // Any byte of the data flipped: the same.
    for (let at = 4; at < size - 8 - footerLength; at += 5) {
      const flipped = good.slice();
      flipped[at]! ^= 0x5a;
      const path = await put('flipped-data.parquet', flipped);
      await within(
        openAndReadAll([path]).catch((error: unknown) => check(isParquetError(path)(error), `data flip at ${at}: ${String(error)}`)),
        10_000,
        `data flip at ${at}`,
      );
    }
  },

  async 'a footer claiming more rows than its pages hold fails page, with the rows lost'() {
    const put = await placer(placing);
    const good = await arrowFile(table(20), { rowGroupSize: 10, codec: 'UNCOMPRESSED', dictionary: false });
    const path = await put('more-rows.parquet', withGroupRows(good, 0, 10, 12));
    const dataset = await openParquetDataset([path]);
    try {
      check(dataset.rowGroups[0]!.rows === 12, `the footer says ${dataset.rowGroups[0]!.rows}`);
      const error = await rejectsWith(dataset.readRowGroup(0, ['label']), isParquetError(path, ['page']), 'more rows than pages');
      check((error as ParquetError).rowGroup === 0 && (error as ParquetError).rows === 12, 'row group and rows lost');
      const next = await dataset.readRowGroup(1, ['label']);
      check(next.rows === 10, 'the next group still reads');
    } finally {
      await dataset.close();
    }
  },

  async 'pages that together decompress past maxColumnChunkBytes fail limit, though each is under it and the footer under-declares them'() {
    const put = await placer(placing);
    // One column of 40 rows of 1000 bytes, all zero but the first (each value its own, so no
    // dictionary): snappy shrinks it to little, in plain pages of about 4 KB.
    const zeros = Array.from({ length: 40 }, (_, i) => new Uint8Array(1000).fill(i, 0, 1));
    const file = new Uint8Array(
      parquetWriteBuffer({
        columnData: [{ name: 'blob', data: zeros, type: 'BYTE_ARRAY', encoding: 'PLAIN' }],
        rowGroupSize: 40,
        pageSize: 4000,
      }),
    );
    const path = await put('many-pages.parquet', withChunkUncompressed(file, 9000));
    await openAndReadAll([path], { maxColumnChunkBytes: 64_000 });
    await rejectsWith(openAndReadAll([path], { maxColumnChunkBytes: 10_000 }), isParquetError(path, ['limit']), 'the pages together');
  },

  async 'only the asked columns bytes are read, through Hub listing, resolve, redirect and Range'() {
    await withHub(serve, async (hub, endpoint) => {
      const t = images(40, 40_000);
      const shards = [
        await arrowImageFile({ image: t.image.slice(0, 20), label: t.label.slice(0, 20) }, { rowGroupSize: 5, metadata: IMAGE_FEATURES }),
      ];
      shards.push(hyparquetImageFile({ image: t.image.slice(20), label: t.label.slice(20) }, 5));
      hub.repos.set('owner/pics', {
        revisions: {
          'refs/convert/parquet': {
            'default/train/0001.parquet': shards[1]!,
            'default/train/0000.parquet': shards[0]!,
            'default/train/README.md': new Uint8Array(3),
            'default/test/0000.parquet': shards[1]!,
          },
        },
      });
      const { urls, headers } = await resolveHubDataset({ hf: 'owner/pics', split: 'train' }, { endpoint, fetch: FAST });
      const base = `${endpoint}/datasets/owner/pics/resolve/refs%2Fconvert%2Fparquet/default/train`;
      assertEqual(urls, [`${base}/0000.parquet`, `${base}/0001.parquet`], 'listed, sorted, parquet only');
      assertEqual(headers, {}, 'no token, no headers');
      const dataset = await openParquetDataset(urls, { fetch: FAST });
      try {
        check(dataset.rowGroups.length === 8, `${dataset.rowGroups.length} row groups`);
        assertEqual(classLabelNames(dataset.features, 'label'), ['cat', 'dog', 'bird'], 'names over HTTP');
        const opened = bytesServed(hub, 'owner/pics/');
        const labels = await readAll(dataset, ['label']);
        assertEqual(labels.label, t.label, 'labels over HTTP');
        const labelBytes = bytesServed(hub, 'owner/pics/') - opened;
        const total = shards[0]!.length + shards[1]!.length;
        check(labelBytes < total / 50, `reading labels read ${labelBytes} of ${total} bytes`);
        const pics = await readAll(dataset, ['image']);
        t.image.forEach((expected, i) => {
          const value = pics.image![i];
          if (!expected?.bytes) {
            check(value === null, `image ${i} should be null`);
            return;
          }
          check(value instanceof Uint8Array && sameBytes(value, expected.bytes), `image ${i} bytes over HTTP`);
        });
        const counts = hub.served.get('owner/pics/refs/convert/parquet/default/train/0000.parquet');
        check(counts !== undefined && counts.ranges.every((r) => r.startsWith('bytes=')), 'every storage read is a Range request');
        check(!hub.hubRequests.some((r) => r.includes('test')), 'the other split is not touched');
        const stop = new AbortController();
        stop.abort(new Error('stopped by the test'));
        await rejectsWith(
          dataset.readRowGroup(0, ['image'], { signal: stop.signal }),
          (e) => (e as Error).message === 'stopped by the test',
          'an aborted read',
        );
        // Signed storage URLs expire: a refused one is resolved again through the Hub.
        const resolves = hub.hubRequests.filter((r) => r.includes('/resolve/')).length;
        hub.expireSignatures();
        // (Row group 4's images start the second file: not among the last bytes that opening it read.)
        const again = (await dataset.readRowGroup(4, ['image'])).column('image')[0];
        check(again instanceof Uint8Array && sameBytes(again, t.image[20]!.bytes!), 'a read after expiry');
        check(hub.hubRequests.filter((r) => r.includes('/resolve/')).length > resolves, 'resolved again');
      } finally {
        await dataset.close();
      }
    });
  },

  async 'Hub listings: partial splits, configs, pages, another revision, hf:// paths'() {
    await withHub(serve, async (hub, endpoint) => {
      const shard = hyparquetFile(table(6), { rowGroupSize: 3 });
      hub.pageSize = 1;
      hub.repos.set('org/big', {
        revisions: {
          'refs/convert/parquet': { 'en/partial-train/0000.parquet': shard, 'en/partial-train/0001.parquet': shard },
          main: {
            'data/train-00001-of-00002.parquet': shard,
            'data/train-00000-of-00002.parquet': shard,
            'data/test-00000-of-00001.parquet': shard,
            'README.md': shard,
          },
          v1: { 'en/train/part.parquet': shard, 'fr/train/part.parquet': shard },
        },
      });
      const partial = await resolveHubDataset({ hf: 'org/big', config: 'en', split: 'train' }, { endpoint, fetch: FAST });
      const conv = `${endpoint}/datasets/org/big/resolve/refs%2Fconvert%2Fparquet/en/partial-train`;
      assertEqual(partial.urls, [`${conv}/0000.parquet`, `${conv}/0001.parquet`], 'partial-train, over two pages');
      const main = await resolveHubDataset({ hf: 'org/big', split: 'train', revision: 'main' }, { endpoint, fetch: FAST });
      const mainBase = `${endpoint}/datasets/org/big/resolve/main/data`;
      assertEqual(
        main.urls,
        [`${mainBase}/train-00000-of-00002.parquet`, `${mainBase}/train-00001-of-00002.parquet`],
        "the revision's own files",
      );
      const fr = await resolveHubDataset({ hf: 'org/big', config: 'fr', split: 'train', revision: 'v1' }, { endpoint, fetch: FAST });
      assertEqual(fr.urls, [`${endpoint}/datasets/org/big/resolve/v1/fr/train/part.parquet`], 'a config folder');
      const dataset = await openParquetDataset(main.urls, { fetch: FAST });
      try {
        check(dataset.rows === 12, `${dataset.rows} rows`);
      } finally {
        await dataset.close();
      }
      assertEqual(
        hfPathToUrl('hf://datasets/org/big@refs%2Fconvert%2Fparquet/en/partial-train/0000.parquet', { endpoint }),
        `${conv}/0000.parquet`,
        'hf:// with an encoded revision',
      );
      assertEqual(
        hfPathToUrl('hf://datasets/org/big@refs/convert/parquet/en/x.parquet', { endpoint }),
        `${endpoint}/datasets/org/big/resolve/refs%2Fconvert%2Fparquet/en/x.parquet`,
        'hf:// with a plain refs revision',
      );
      assertEqual(
        hfPathToUrl('hf://datasets/org/big/data/a b.parquet', { endpoint }),
        `${endpoint}/datasets/org/big/resolve/main/data/a%20b.parquet`,
        'hf:// without a revision',
      );
      assertEqual(
        hfPathToUrl('hf://datasets/org/big@v1/x.parquet'),
        'https://huggingface.co/datasets/org/big/resolve/v1/x.parquet',
        'the public Hub by default',
      );
      for (const bad of ['hf://models/org/big/x.parquet', 'hf://datasets/big', 'https://x/y'])
        await rejectsWith(
          Promise.resolve().then(() => hfPathToUrl(bad)),
          (e) => (e as { code?: string }).code === 'invalid-option',
          `bad path ${bad}`,
        );
    });
  },

  async 'a gated dataset: 401 without the token, read with it'() {
    await withHub(serve, async (hub, endpoint) => {
      hub.repos.set('corp/secret', {
        token: 'hf_right',
        revisions: { 'refs/convert/parquet': { 'default/train/0000.parquet': hyparquetFile(table(5), { rowGroupSize: 5 }) } },
      });
      const spec = { hf: 'corp/secret', split: 'train' };
      const gated = await rejectsWith(
        resolveHubDataset(spec, { endpoint, fetch: FAST }),
        (e) => e instanceof HubError && e.code === 'gated',
        'no token',
      );
      check(/token/.test((gated as Error).message), 'the message says to pass a token');
      await rejectsWith(
        resolveHubDataset(spec, { endpoint, token: 'hf_wrong', fetch: FAST }),
        (e) => e instanceof HubError && e.code === 'gated',
        'a wrong token',
      );
      const { urls, headers } = await resolveHubDataset(spec, { endpoint, token: 'hf_right', fetch: FAST });
      assertEqual(headers, { Authorization: 'Bearer hf_right' }, 'the token for the reads');
      const refused = await rejectsWith(
        openParquetDataset(urls, { fetch: FAST }),
        isParquetError(urls[0]!, ['open']),
        'a read without the token',
      );
      check(
        (refused as Error).cause instanceof FetchError && ((refused as Error).cause as FetchError).status === 401,
        'the cause is the 401',
      );
      const dataset = await openParquetDataset(urls, { fetch: { ...FAST, headers } });
      try {
        checkTable(await readAll(dataset, COLUMNS), table(5), 'gated');
      } finally {
        await dataset.close();
      }
    });
  },

  async 'a missing dataset or split is not-found; a 429 is retried after its Retry-After'() {
    await withHub(serve, async (hub, endpoint) => {
      const shard = hyparquetFile(table(3), { rowGroupSize: 3 });
      hub.repos.set('busy/set', {
        rateLimit: { times: 1, retryAfterSeconds: 1 },
        revisions: { 'refs/convert/parquet': { 'default/train/0000.parquet': shard } },
      });
      const notFound = (e: unknown) => e instanceof HubError && e.code === 'not-found';
      // Without a token the Hub answers 401 RepoNotFound (the repository may be private): still not-found, not gated.
      await rejectsWith(resolveHubDataset({ hf: 'no/such', split: 'train' }, { endpoint, fetch: FAST }), notFound, 'no such dataset');
      await rejectsWith(
        resolveHubDataset({ hf: 'no/such', split: 'train' }, { endpoint, token: 't', fetch: FAST }),
        notFound,
        'no such dataset, with a token (404)',
      );
      const started = Date.now();
      const { urls } = await resolveHubDataset({ hf: 'busy/set', split: 'train' }, { endpoint, fetch: FAST });
      check(urls.length === 1 && Date.now() - started >= 900, `retried after about 1 s (${Date.now() - started} ms)`);
      await rejectsWith(resolveHubDataset({ hf: 'busy/set', split: 'validation' }, { endpoint, fetch: FAST }), notFound, 'no such split');
      hub.repos.get('busy/set')!.rateLimit = { times: 5, retryAfterSeconds: 1 };
      const limited = await rejectsWith(
        resolveHubDataset({ hf: 'busy/set', split: 'train' }, { endpoint, fetch: { ...FAST, retries: 0 } }),
        (e) => e instanceof HubError && e.code === 'rate-limited',
        'rate limited without retries',
      );
      check((limited as HubError).retryAfterSeconds === 1, 'retryAfterSeconds');
      await rejectsWith(
        resolveHubDataset({ hf: 'bad name!', split: 'train' }, { endpoint }),
        (e) => (e as { code?: string }).code === 'invalid-option',
        'a bad repository name',
      );
    });
  },

  async 'remote files: truncated, shrunk after opening (416), missing: ParquetErrors naming the URL'() {
    await withHub(serve, async (hub, endpoint) => {
      // 160 KB, so that the row groups read lie before the last 64 KiB, which opening a file reads.
      const good = hyparquetFile(table(6000), { rowGroupSize: 2000 });
      const files: Record<string, Uint8Array> = {
        'default/train/0000.parquet': good,
        'default/train/0001.parquet': good.slice(0, good.length - 20),
      };
      hub.repos.set('a/b', { revisions: { 'refs/convert/parquet': files } });
      const { urls } = await resolveHubDataset({ hf: 'a/b', split: 'train' }, { endpoint, fetch: FAST });
      await rejectsWith(openParquetDataset(urls, { fetch: FAST }), isParquetError(urls[1]!, ['footer']), 'a truncated remote file');
      const dataset = await openParquetDataset([urls[0]!], { fetch: FAST });
      try {
        files['default/train/0000.parquet'] = good.slice(0, 50);
        const shrunk = await rejectsWith(dataset.readRowGroup(0, ['text']), isParquetError(urls[0]!, ['open']), 'a file that shrank');
        check(
          ((shrunk as Error).cause as { code?: string })?.code === 'range',
          `the cause is a HubError range: ${String((shrunk as Error).cause)}`,
        );
      } finally {
        await dataset.close();
      }
      // Replaced after opening by a file of the same size and layout but other values: its ETag
      // changed, so no range of the new file is mixed into the old one's footer.
      const other = good.slice();
      other[30_000]! ^= 1;
      files['default/train/0000.parquet'] = good;
      const before = await openParquetDataset([urls[0]!], { fetch: FAST });
      try {
        assertEqual((await before.readRowGroup(0, ['id'])).column('id'), table(2000).id.map(Number), 'read before the change');
        files['default/train/0000.parquet'] = other;
        const changed = await rejectsWith(before.readRowGroup(1, ['id']), isParquetError(urls[0]!, ['open']), 'a file replaced meanwhile');
        check(String((changed as Error).message).includes('changed'), `says the file changed: ${(changed as Error).message}`);
      } finally {
        await before.close();
      }
      files['default/train/0000.parquet'] = good;
      // A 429 on a range read waits its Retry-After (a second), not the backoff (10 ms).
      const limited = await openParquetDataset([urls[0]!], { fetch: FAST });
      try {
        hub.storageRateLimit = { times: 1, retryAfterSeconds: 1 };
        const started = Date.now();
        assertEqual((await limited.readRowGroup(0, ['id'])).column('id'), table(2000).id.map(Number), 'read after the 429');
        check(Date.now() - started >= 900, `waited the Retry-After (${Date.now() - started} ms)`);
      } finally {
        hub.storageRateLimit = undefined;
        await limited.close();
      }
      // A server without Range support: a file that fits the first read is read from it, whole.
      files['default/train/0002.parquet'] = hyparquetFile(table(30), { rowGroupSize: 10 });
      hub.ignoreRanges = true;
      try {
        await openAndReadAll([urls[0]!.replace('0000.parquet', '0002.parquet')], { fetch: FAST });
      } finally {
        hub.ignoreRanges = false;
      }
      const missing = `${endpoint}/datasets/a/b/resolve/refs%2Fconvert%2Fparquet/default/train/9999.parquet`;
      await rejectsWith(openParquetDataset([missing], { fetch: FAST }), isParquetError(missing, ['open']), 'a missing file');
    });
  },
});
