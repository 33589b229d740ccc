// loader(), the front door, as a user calls it: every source kind, every target, the lifecycle, the
// position it can resume from, and options refused with the field named. The references are
// independent of the loader: the decode pool called directly for pixels, the sampler's arithmetic
// for order, normalizeByHand (the tests' own) on those pixels for the GPU's floats.
import { DecodeError, DecodePool, ImageBatcher } from '../../src/decode/index.ts';
import { BatchReleasedError, OptionError } from '../../src/errors/index.ts';
import { acquireGpu, AugmentKernel, BatchUploader, NormalizeKernel, readBuffer } from '../../src/gpu/index.ts';
import { normalizeByHand } from './normalize-by-hand.ts';
import { loader, LoaderError, type LoaderState } from '../../src/loader/index.ts';
import { PipelineBuilder } from '../../src/pipeline/index.ts';
import { DistributedSampler, shuffledEpoch, SourceError, type DirectoryHandleLike } from '../../src/sources/index.ts';
import { presets, ViTTrainer } from '../../src/vit/index.ts';
import { TfjsFeeder } from '../../src/tfjs/index.ts';
import { OnnxFeeder } from '../../src/onnx/index.ts';
import { cacheDir, makeDir, writeFileAtomic } from '../../src/runtime/index.ts';
import { assertEqual, check, rejectsWith } from './assert.ts';
import { writeTar } from './tar-helpers.ts';
import { sampleImages } from './transfer-scenarios.ts';
import { checkBatchEnds } from './batch-ends.ts';

const SIZE = 24;

function items(count: number) {
  return sampleImages(count, 64).map((s) => ({ bytes: s.bytes, label: s.label ?? -1, key: s.key! }));
}

/** A FileSystemDirectoryHandle's shape over in-memory files: root/<class>/<name>. */
function directoryHandle(files: Record<string, Record<string, Uint8Array>>): DirectoryHandleLike {
  const dir = (name: string, entries: (DirectoryHandleLike | { kind: 'file'; name: string; getFile(): Promise<Blob> })[]) => ({
    kind: 'directory' as const,
    name,
    async *values() {
      yield* entries;
    },
  });
  return dir(
    'root',
    Object.entries(files).map(([cls, names]) =>
      dir(
        cls,
        Object.entries(names).map(([name, bytes]) => ({
          kind: 'file' as const,
          name,
          getFile: async () => new Blob([bytes as Uint8Array<ArrayBuffer>]),
        })),
      ),
    ),
  );
}

async function keysOf(data: AsyncIterable<{ keys: readonly string[]; release(): void }>, limit = Infinity): Promise<string[]> {
  const keys: string[] = [];
  let batches = 0;
  for await (const batch of data) {
    keys.push(...batch.keys);
    batch.release();
    if (++batches >= limit) break;
  }
  return keys;
}

export const frontDoorCpuScenarios: Record<string, () => Promise<void>> = {
  async 'loader(): CPU batches hold the pixels the decode pool gives, every item once, bad ones reported'() {
    const list = items(11);
    list[3] = { ...list[3]!, bytes: list[3]!.bytes.subarray(0, 120), key: 'cut-3' };
    await using pool = await DecodePool.create({ threads: 2 });
    await using data = loader(list, { batchSize: 4, size: SIZE, pool });
    const seen: string[] = [];
    for await (const batch of data) {
      check(batch.shape[1] === SIZE && batch.shape[2] === SIZE && batch.shape[3] === 3, `batch shape ${batch.shape}`);
      for (let row = 0; row < batch.count; row++) {
        const key = batch.keys[row]!;
        const item = list.find((i) => i.key === key)!;
        const want = await pool.decode(item.bytes, { width: SIZE, height: SIZE, fit: 'cover' });
        const got = batch.data.subarray(row * SIZE * SIZE * 3, (row + 1) * SIZE * SIZE * 3);
        check(
          got.every((v, i) => v === want.pixels[i]),
          `row ${row} (${key}) differs from the pool's own decode`,
        );
        check(batch.labels[row] === item.label, `label of ${key}`);
        seen.push(key);
      }
      batch.release();
    }
    assertEqual(
      seen,
      list.filter((i) => i.key !== 'cut-3').map((i) => i.key),
      'every good item once, in source order',
    );
    const failures = data.failures();
    check(
      failures.length === 1 && failures[0]!.key === 'cut-3' && failures[0]!.stage === 'decode',
      `failures: ${JSON.stringify(failures)}`,
    );
    check(failures[0]!.error instanceof DecodeError && (failures[0]!.error as DecodeError).code === 'truncated', 'a typed decode error');
    check(data.stats()?.stages.some((s) => s.name === 'decode') === true, 'stats name the decode stage');
    check(data.summary().includes('decode'), 'the summary names the stages');
  },

  async 'loader(): a seeded shuffle gives the sampler order, epoch after epoch, and each for-await continues'() {
    const list = items(10);
    await using data = loader(list, { batchSize: 3, size: 16, shuffle: true, seed: 5, epochs: 2, threads: 1 });
    const keys = list.map((i) => i.key);
    const first = await keysOf(data);
    assertEqual(
      first,
      [...shuffledEpoch(keys, 5, 0), ...shuffledEpoch(keys, 5, 1)],
      'two epochs in the seeded order, across batch boundaries',
    );
    const again = await keysOf(data);
    assertEqual(again, [...shuffledEpoch(keys, 5, 2), ...shuffledEpoch(keys, 5, 3)], 'the next for-await runs the next two epochs');
    data.setEpoch(7);
    assertEqual([data.state().sampler?.epoch, data.state().sampler?.offset], [7, 0], 'the state after setEpoch(7)');
    const seventh = await keysOf(data);
    assertEqual(seventh.slice(0, 10), shuffledEpoch(keys, 5, 7), 'setEpoch(7) starts epoch 7');
  },

  async 'loader(): state() after any batch resumes with exactly the batches a run that never stopped gives'() {
    const list = items(13);
    list[6] = { ...list[6]!, bytes: new TextEncoder().encode('not an image'), key: 'text-6' };
    const options = { batchSize: 4, size: 16, shuffle: true, seed: 3, epochs: 2, threads: 1 } as const;
    await using whole = loader(list, options);
    const everything: string[][] = [];
    for await (const batch of whole) {
      everything.push([...batch.keys]);
      batch.release();
    }
    for (const stopAfter of [1, 3, 4]) {
      let state: LoaderState | undefined;
      const before: string[][] = [];
      {
        await using first = loader(list, options);
        for await (const batch of first) {
          before.push([...batch.keys]);
          batch.release();
          if (before.length === stopAfter) {
            state = JSON.parse(JSON.stringify(first.state())) as LoaderState; // as a checkpoint holds it
            break;
          }
        }
      }
      await using resumed = loader(list, { ...options, resumeFrom: state! });
      const after: string[][] = [];
      for await (const batch of resumed) {
        after.push([...batch.keys]);
        batch.release();
      }
      assertEqual([...before, ...after], everything, `stopped after ${stopAfter} batches and resumed: the same batches`);
    }
    await rejectsWith(
      (async () => {
        await using other = loader(list, { ...options, seed: 4, resumeFrom: whole.state() });
        for await (const batch of other) batch.release();
      })(),
      (e) => e instanceof OptionError && e.field === 'resumeFrom' && e.message.includes('seed'),
      'a state of another seed is refused, naming the seed',
    );
  },

  async 'loader(): a directory handle and an async iterable are sources too'() {
    const list = items(6);
    const handle = directoryHandle({
      cats: { 'a.jpg': list[0]!.bytes, 'b.jpg': list[1]!.bytes, 'notes.txt': new Uint8Array(3) },
      dogs: { 'c.jpg': list[2]!.bytes },
    });
    await using fromHandle = loader(handle, { batchSize: 8, size: 16, threads: 1 });
    assertEqual(await fromHandle.classes(), ['cats', 'dogs'], 'classes from the folder names');
    const labels: number[] = [];
    for await (const batch of fromHandle) {
      labels.push(...batch.labels);
      batch.release();
    }
    assertEqual(labels, [0, 0, 1], 'labels by folder, non-images left out');
    async function* stream() {
      for (const item of list) yield item;
    }
    await using fromStream = loader(stream(), { batchSize: 4, size: 16, threads: 1 });
    assertEqual(
      await keysOf(fromStream),
      list.map((i) => i.key),
      'an async iterable in its own order',
    );
    await rejectsWith(keysOf(fromStream), (e) => e instanceof OptionError && e.field === 'source', 'an iterable is read once');
    for (const listOnly of [{ shuffle: true }, { epochs: 2 }, { worldSize: 2, rank: 0 }]) {
      await using wrong = loader(stream(), { ...listOnly, threads: 1 });
      await rejectsWith(
        wrong.classes(),
        (e) => e instanceof OptionError && e.field === Object.keys(listOnly)[0] && e.message.includes('iterable'),
        `${JSON.stringify(listOnly)} with an iterable source`,
      );
    }
  },

  async 'loader(): a released batch is a BatchReleasedError; two for-awaits at once, or after close, a LoaderError'() {
    const data = loader(items(8), { batchSize: 4, size: 16, threads: 1 });
    const iterator = data[Symbol.asyncIterator]();
    const first = await iterator.next();
    check(!first.done, 'a first batch');
    const batch = first.value;
    batch.release();
    let error: unknown;
    try {
      void batch.data;
    } catch (e) {
      error = e;
    }
    check(error instanceof BatchReleasedError && error.code === 'batch-released', `data after release: ${String(error)}`);
    await rejectsWith(
      data[Symbol.asyncIterator]().next(),
      (e) => e instanceof LoaderError && e.code === 'busy',
      'a second for-await at once',
    );
    await iterator.return(undefined);
    await data.close();
    await rejectsWith(data[Symbol.asyncIterator]().next(), (e) => e instanceof LoaderError && e.code === 'closed', 'after close()');
  },
};

export const frontDoorGpuScenarios: Record<string, () => Promise<void>> = {
  async 'loader(to: gpu): normalised f32 batches equal the CPU reference of the decoded pixels, labels padded with −1'() {
    const list = items(6);
    using gpu = await acquireGpu();
    await using pool = await DecodePool.create({ threads: 2 });
    for (const layout of ['NCHW', 'NHWC'] as const) {
      await using data = loader(list, { batchSize: 4, size: SIZE, to: gpu, layout, pool, mean: [0.5, 0.4, 0.3], std: [0.2, 0.25, 0.3] });
      let rows = 0;
      for await (const batch of data) {
        const images = new Float32Array(await readBuffer(gpu.device, batch.images));
        const labels = new Int32Array(await readBuffer(gpu.device, batch.labelBuffer));
        const pixels = new Uint8Array(batch.count * SIZE * SIZE * 3);
        for (let row = 0; row < batch.count; row++) {
          const item = list.find((i) => i.key === batch.keys[row])!;
          pixels.set((await pool.decode(item.bytes, { width: SIZE, height: SIZE, fit: 'cover' })).pixels, row * SIZE * SIZE * 3);
          check(labels[row] === item.label, `label ${row}`);
        }
        const want = normalizeByHand(
          pixels,
          { images: batch.count, height: SIZE, width: SIZE, channels: 3 },
          {
            layout,
            mean: [0.5, 0.4, 0.3],
            std: [0.2, 0.25, 0.3],
          },
        );
        let worst = 0;
        for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(images[i]! - want[i]!));
        check(worst < 1e-5, `${layout}: GPU floats differ from the CPU reference by ${worst}`);
        check(
          [...labels.subarray(batch.count)].every((l) => l === -1),
          'labels past count are −1',
        );
        check(batch.layout === layout && batch.shape[0] === batch.count, `shape ${batch.shape} in ${batch.layout}`);
        rows += batch.count;
        checkBatchEnds('DeviceBatch', batch, (b) => b.images);
      }
      check(rows === list.length, `${rows} rows`);
      check(data.output === 'gpu', `output ${data.output}`);
    }
  },

  async "loader(to: gpu, normalize: false): the u8 batches as uploaded; close() with batches in flight ends the pass and leaves the caller's pool working"() {
    const list = items(12);
    using gpu = await acquireGpu();
    await using pool = await DecodePool.create({ threads: 2 });
    const data = loader(list, { batchSize: 2, size: 16, to: gpu.device, normalize: false, pool });
    for await (const batch of data) {
      check(batch.dtype === 'uint8' && batch.byteLength === 2 * 16 * 16 * 3, `a u8 batch of ${batch.byteLength} bytes`);
      const want = await pool.decode(list.find((i) => i.key === batch.keys[0])!.bytes, { width: 16, height: 16, fit: 'cover' });
      const got = new Uint8Array(await readBuffer(gpu.device, batch.buffer)).subarray(0, 16 * 16 * 3);
      check(
        got.every((v, i) => v === want.pixels[i]),
        'the uploaded bytes are the decoded pixels',
      );
      checkBatchEnds('GpuBatch', batch, (b) => b.buffer);
      break; // the other batches are in flight: close() must end them
    }
    check(data.output === 'gpu-u8', `output ${data.output}`);
    await data.close();
    // The pool is the caller's: it keeps working for the next user.
    const again = await pool.decode(list[0]!.bytes, { width: 8, height: 8 });
    check(again.pixels.length === 8 * 8 * 3, 'the shared pool decodes after the loader closed');
  },
};

/** Node and Deno: the sources that live on disk, a folder path and WebDataset shards. */
export const frontDoorFileScenarios: Record<string, () => Promise<void>> = {
  async 'loader(): a folder path (ImageFolder layout) and WebDataset shards, shuffled over two epochs, resumed mid-run from JSON'() {
    const root = `${cacheDir()}/test-front-door-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
    try {
      await folderAndShardsFromDisk(root);
    } finally {
      // node:fs (Deno has it too) only here: this module is also loaded in the browser.
      const { rm } = await import('node:fs/promises');
      await rm(root, { recursive: true, force: true });
    }
  },
};

async function folderAndShardsFromDisk(root: string): Promise<void> {
  const list = items(12);
  for (const [i, item] of list.entries()) {
    await makeDir(`${root}/folder/class-${item.label}`);
    await writeFileAtomic(`${root}/folder/class-${item.label}/${i}.jpg`, item.bytes);
  }
  await using fromFolder = loader(`${root}/folder`, { batchSize: 5, size: 16, threads: 1 });
  const classes = await fromFolder.classes();
  const labels = new Map<string, number>();
  for await (const batch of fromFolder) {
    for (const [row, key] of batch.keys.entries()) labels.set(key, batch.labels[row]!);
    batch.release();
  }
  check(labels.size === 12, `${labels.size} images from the folder`);
  for (const [key, label] of labels) check(classes[label] === key.split('/').at(-2), `${key} labelled ${classes[label]}`);

  // Three shards of four samples; one sample lacks its label.
  const shards: string[] = [];
  for (let s = 0; s < 3; s++) {
    const entries = list.slice(s * 4, s * 4 + 4).flatMap((item, i) => {
      const key = `s${s}-${i}`;
      return key === 's1-2'
        ? [{ name: `${key}.jpg`, data: item.bytes }]
        : [
            { name: `${key}.jpg`, data: item.bytes },
            { name: `${key}.cls`, data: String(item.label) },
          ];
    });
    shards.push(`${root}/shard-${s}.tar`);
    await writeFileAtomic(shards[s]!, writeTar(entries));
  }
  const options = { batchSize: 3, size: 16, shuffle: true, seed: 2, epochs: 2, threads: 1 } as const;
  const everything: string[][] = [];
  {
    await using whole = loader({ shards, shuffleBuffer: 4 }, options);
    for await (const batch of whole) {
      everything.push([...batch.keys]);
      batch.release();
    }
    const failures = whole.failures();
    check(
      failures.length === 2 && failures.every((f) => f.stage === 'read' && f.error instanceof SourceError && f.key.endsWith('#s1-2')),
      `the unlabelled sample, once per epoch: ${JSON.stringify(failures.map((f) => [f.key, f.stage, f.error.name]))}`,
    );
  }
  const keys = everything.flat();
  check(
    keys.length === 22 && new Set(keys).size === 11,
    `11 good samples × 2 epochs, each once an epoch: ${keys.length} keys, ${new Set(keys).size} distinct`,
  );
  let state: LoaderState | undefined;
  const before: string[][] = [];
  {
    await using first = loader({ shards, shuffleBuffer: 4 }, options);
    for await (const batch of first) {
      before.push([...batch.keys]);
      batch.release();
      if (before.length === 3) {
        state = JSON.parse(JSON.stringify(first.state())) as LoaderState;
        break;
      }
    }
  }
  await using resumed = loader({ shards, shuffleBuffer: 4 }, { ...options, resumeFrom: state! });
  const after: string[][] = [];
  for await (const batch of resumed) {
    after.push([...batch.keys]);
    batch.release();
  }
  assertEqual([...before, ...after].flat(), keys, 'stopped after 3 batches and resumed from JSON: the same samples in the same order');
  await rejectsWith(
    (async () => {
      await using other = loader({ shards, shuffleBuffer: 4 }, { ...options, seed: 3, resumeFrom: state! });
      for await (const batch of other) batch.release();
    })(),
    (e) => e instanceof OptionError && e.field === 'resumeFrom' && e.message.includes('seed'),
    'a shard state of another seed is refused, naming the seed',
  );
}

/** Each bad option with the field the error must name. */
const BAD_OPTIONS: [Record<string, unknown>, string][] = [
  [{ batchSize: Number.NaN }, 'batchSize'],
  [{ batchSize: 0 }, 'batchSize'],
  [{ batchSize: -4 }, 'batchSize'],
  [{ batchSize: '32' }, 'batchSize'],
  [{ batchSize: 2.5 }, 'batchSize'],
  // Each in range, the batch 4 GiB (64 × 4096² × 4): past what a wasm allocation takes.
  [{ batchSize: 64, size: 4096, channels: 4 }, 'batchSize'],
  [{ size: 0 }, 'size'],
  [{ size: [32] }, 'size'],
  [{ size: [32, Number.NaN] }, 'size'],
  [{ transform: 'crop' }, 'transform'],
  [{ channels: 2 }, 'channels'],
  [{ shuffle: 'yes' }, 'shuffle'],
  [{ seed: 1.5 }, 'seed'],
  [{ epochs: 0 }, 'epochs'],
  [{ threads: Number.NaN }, 'threads'],
  [{ threads: 0 }, 'threads'],
  [{ worldSize: 2, rank: 2 }, 'rank'],
  [{ worldSize: 0 }, 'worldSize'],
  [{ readConcurrency: -1 }, 'readConcurrency'],
  [{ to: 'gpu' }, 'to'],
  [{ to: {} }, 'to'],
  [{ layout: 'CHW' }, 'layout'],
  [{ mean: [0.5] }, 'mean'],
  [{ std: [1, 1, 0] }, 'std'],
  [{ normalize: 1 }, 'normalize'],
  [{ labels: 'onehot' }, 'labels'],
  [{ pool: {} }, 'pool'],
  [{ failureBudget: { maxFailureRate: 2 } }, 'maxFailureRate'],
  [{ failureBudget: { maxFailures: -1 } }, 'maxFailures'],
  [{ failureBudget: { tolerance: 1 } }, 'tolerance'],
  [{ decode: { maxPixels: 0 } }, 'maxPixels'],
  [{ decode: { filter: 'cubic' } }, 'filter'],
  [{ resumeFrom: { position: 3 } }, 'resumeFrom'],
  [{ signal: 'stop' }, 'signal'],
  [{ batchsize: 32 }, 'batchsize'],
];

/** A public entry point, a valid options object for it, and its integer fields. */
interface Entry {
  name: string;
  call: (options: Record<string, unknown>) => unknown;
  valid: Record<string, unknown>;
  integers: string[];
}

const fakeDevice = {} as GPUDevice;
const ENTRIES: Entry[] = [
  { name: 'DecodePool.create', call: (o) => DecodePool.create(o), valid: { threads: 1 }, integers: ['threads', 'maxInFlight'] },
  {
    name: 'ImageBatcher',
    call: (o) => new ImageBatcher({} as DecodePool, o as never),
    valid: { batchSize: 2, height: 8, width: 8 },
    integers: ['batchSize', 'height', 'width', 'channels', 'buffers'],
  },
  {
    name: 'BatchUploader',
    call: (o) => new BatchUploader(fakeDevice, o as never),
    valid: { maxBatchBytes: 64 },
    integers: ['maxBatchBytes', 'slots'],
  },
  {
    name: 'NormalizeKernel.create shape',
    call: (o) => NormalizeKernel.create(fakeDevice, o as never),
    valid: { images: 2, height: 4, width: 4, channels: 3 },
    integers: ['images', 'height', 'width', 'channels'],
  },
  {
    name: 'AugmentKernel.create shape',
    call: (o) => AugmentKernel.create(fakeDevice, o as never),
    valid: { images: 2, srcHeight: 8, srcWidth: 8, channels: 3, outHeight: 4, outWidth: 4 },
    integers: ['images', 'srcHeight', 'srcWidth', 'channels', 'outHeight', 'outWidth'],
  },
  {
    name: 'ViTTrainer.create',
    call: (o) => ViTTrainer.create(fakeDevice, o as never),
    valid: { config: presets.tiny, batchSize: 2 },
    integers: ['batchSize'],
  },
  {
    name: 'pipe options',
    call: (o) => new PipelineBuilder().addSource([1]).pipe((x: number) => x, o as never),
    valid: {},
    integers: ['concurrency', 'queueSize'],
  },
  { name: 'DistributedSampler', call: (o) => new DistributedSampler(o as never), valid: { size: 4 }, integers: ['epochs'] },
  { name: 'loader', call: (o) => loader([], o as never), valid: {}, integers: ['batchSize', 'threads', 'epochs', 'readConcurrency'] },
  {
    name: 'TfjsFeeder.create',
    call: (o) => TfjsFeeder.create({} as never, o as never),
    valid: { batchSize: 2, height: 4, width: 4 },
    integers: ['batchSize', 'height', 'width', 'channels'],
  },
  {
    name: 'OnnxFeeder.create',
    call: (o) => OnnxFeeder.create({} as never, o as never),
    valid: { batchSize: 2, height: 4, width: 4 },
    integers: ['batchSize', 'height', 'width', 'channels'],
  },
  { name: 'acquireGpu', call: (o) => acquireGpu(o as never), valid: {}, integers: [] },
];

async function refusal(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  return undefined;
}

export const frontDoorOptionScenarios: Record<string, () => Promise<void>> = {
  async 'every public constructor and create refuses NaN, 0, negative, wrong-type and unknown options, naming the field'() {
    for (const entry of ENTRIES) {
      for (const field of entry.integers) {
        for (const bad of [Number.NaN, 0, -3, '4', 1.5]) {
          if (bad === 0 && entry.name === 'DistributedSampler') continue; // zero epochs is a valid, empty sampler
          const error = await refusal(() => entry.call({ ...entry.valid, [field]: bad }));
          check(
            error instanceof OptionError && error.field === field && error.message.includes(`${field} must be`),
            `${entry.name} { ${field}: ${String(bad)} }: expected an OptionError naming ${field}, got ${String(error)}`,
          );
        }
      }
      const unknown = await refusal(() => entry.call({ ...entry.valid, bogusOption: 1 }));
      check(
        unknown instanceof OptionError && unknown.field === 'bogusOption',
        `${entry.name}: an unknown option is refused by name, got ${String(unknown)}`,
      );
    }
  },

  async 'loader(): every bad option is an OptionError naming the field and the value, before anything starts'() {
    for (const [options, field] of BAD_OPTIONS) {
      let error: unknown;
      try {
        loader([], options as never);
      } catch (e) {
        error = e;
      }
      check(
        error instanceof OptionError && error.code === 'invalid-option' && error.field.endsWith(field) && error.message.includes(field),
        `${JSON.stringify(options)}: expected an OptionError naming ${field}, got ${String(error)}`,
      );
      check(error.message.includes('got '), `the message shows the value: ${error.message}`);
    }
    let bad: unknown;
    try {
      loader([], 'options' as never);
    } catch (e) {
      bad = e;
    }
    check(bad instanceof OptionError, 'options that are not an object');
    let source: unknown;
    try {
      await loader(42 as never, { threads: 1 }).classes();
    } catch (e) {
      source = e;
    }
    check(source instanceof OptionError && source.field === 'source', `a source that is none: ${String(source)}`);
  },
};
