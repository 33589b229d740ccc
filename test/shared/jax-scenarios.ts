// Text batches into jax-js through tandem/jax, against the batch's own arrays and a plain
// TypeScript reference of a tiny next-token loss. The runtimes' test files pass jax-js's
// namespace, already initialised with the backends they have (wasm everywhere, webgpu where
// jax-js can start it).
import type * as jaxjs from '@jax-js/jax';
import { acquireGpu, FeedError, GpuError, type GpuContext } from '../../src/gpu/index.ts';
import { jaxImages, jaxTokens, type DeviceTokenBatch, type HostTokenBatch } from '../../src/jax/index.ts';
import { OptionError } from '../../src/errors/index.ts';
import type { TokenBatch, TokenDeviceBatch } from '../../src/text/index.ts';
import { assertEqual, check, rejectsWith } from './assert.ts';
import { countReadbacks, describeReadbacks } from './readbacks.ts';
import { checkBatchEnds } from './batch-ends.ts';

type Jax = typeof jaxjs;
// The text loader's batches are what tandem/jax declares by structure: a compile-time check.
export const textBatchesFitJax: [(b: TokenBatch) => HostTokenBatch, (b: TokenDeviceBatch) => DeviceTokenBatch] = [(b) => b, (b) => b];
const ROWS = 3;
const SEQ = 8;
const VOCAB = 11;
const FIELDS = ['inputs', 'labels', 'docIds', 'positions'] as const;

/** A packed-looking batch: two documents per filled row, −1 labels at each document's end and past `count`. */
function tokenValues(count: number, seed: number): Record<(typeof FIELDS)[number], Int32Array<ArrayBuffer>> {
  const n = ROWS * SEQ;
  const v = { inputs: new Int32Array(n), labels: new Int32Array(n), docIds: new Int32Array(n), positions: new Int32Array(n) };
  for (let r = 0; r < ROWS; r++)
    for (let t = 0; t < SEQ; t++) {
      const i = r * SEQ + t;
      const filled = r < count;
      const doc = t < 5 ? 0 : 1;
      v.inputs[i] = filled ? (seed + 3 * i + r) % VOCAB : 0;
      v.labels[i] = filled && t !== 4 && t !== SEQ - 1 ? (seed + 3 * (i + 1) + r) % VOCAB : -1;
      v.docIds[i] = filled ? doc : -1;
      v.positions[i] = filled ? (doc === 0 ? t : t - 5) : 0;
    }
  return v;
}

interface CountedRelease {
  releases: number;
}

function hostBatch(count: number, seed: number): HostTokenBatch & CountedRelease & { values: ReturnType<typeof tokenValues> } {
  const values = tokenValues(count, seed);
  const batch = {
    ...values,
    values,
    count,
    shape: [ROWS, SEQ] as const,
    keys: ['doc#0', 'doc#1'],
    releases: 0,
    // What a ring does after release: the arrays take the next batch.
    release: () => {
      batch.releases++;
      for (const f of FIELDS) values[f].fill(77);
    },
  };
  return batch;
}

function weights(): Float32Array {
  const w = new Float32Array(VOCAB * VOCAB);
  for (let i = 0; i < w.length; i++) w[i] = Math.sin(i * 0.37) * 2;
  return w;
}

/** Mean over labelled positions of −log softmax(W[input])[label], in float64. */
function lossReference(inputs: Int32Array, labels: Int32Array, w: Float32Array): number {
  let total = 0;
  let n = 0;
  for (let i = 0; i < inputs.length; i++) {
    if (labels[i]! < 0) continue;
    const row = w.subarray(inputs[i]! * VOCAB, (inputs[i]! + 1) * VOCAB);
    const max = Math.max(...row);
    let sum = 0;
    for (const x of row) sum += Math.exp(x - max);
    total += -(row[labels[i]!]! - max - Math.log(sum));
    n++;
  }
  return total / n;
}

/**
 * The same loss in jax-js: one-hot embedding lookup (oneHot · W), log-softmax, the label's entry.
 * jax-js's oneHot does not give a zero row for −1 (JAX's does), so −1 labels are clamped and masked.
 */
async function lossInJax(jax: Jax, inputs: jaxjs.Array, labels: jaxjs.Array, w: Float32Array): Promise<number> {
  const np = jax.numpy;
  const device = inputs.device;
  const table = np.array(w, { shape: [VOCAB, VOCAB], device });
  const logits = np.matmul(jax.nn.oneHot(inputs, VOCAB), table);
  const logp = jax.nn.logSoftmax(logits, -1);
  const mask = np.greaterEqual(labels.ref, 0).astype(np.float32);
  const picked = np.sum(np.multiply(logp, jax.nn.oneHot(np.maximum(labels, 0), VOCAB)), -1);
  const total = np.sum(np.multiply(picked, mask.ref));
  const count = np.sum(mask);
  return -(await total.data())[0]! / (await count.data())[0]!;
}

async function sumOfProducts(a: jaxjs.Array, b: jaxjs.Array, np: Jax['numpy']): Promise<number> {
  return (await np.sum(np.multiply(a, b)).data())[0]!;
}

async function checkArraysEqual(
  got: Awaited<ReturnType<typeof jaxTokens>>,
  want: ReturnType<typeof tokenValues>,
  count: number,
  jax: Jax,
): Promise<void> {
  for (const f of FIELDS) {
    const arr = got[f];
    assertEqual(arr.shape, [count, SEQ], `${f} shape`);
    check(arr.dtype === jax.numpy.int32, `${f} dtype ${arr.dtype}`);
    assertEqual(Array.from(await arr.ref.data()), Array.from(want[f].subarray(0, count * SEQ)), `${f} values`);
  }
}

/** A CPU batch: values equal exactly, the loss equals the reference, and the released batch's refill does not reach jax-js. */
export async function hostBatchIntoJax(jax: Jax, device: jaxjs.Device): Promise<void> {
  const w = weights();
  for (const count of [ROWS, 2]) {
    const batch = hostBatch(count, 5 + count);
    const want = tokenValues(count, 5 + count);
    const got = await jaxTokens(jax, batch, { device });
    check(batch.releases === 1, 'the batch is released once');
    check(batch.values.inputs[0] === 77, 'the release refilled the batch');
    check(got.path === 'cpu' && got.count === count && got.seqLen === SEQ, `path ${got.path}, ${got.count}×${got.seqLen}`);
    check(got.inputs.device === device, `on ${got.inputs.device}`);
    await checkArraysEqual(got, want, count, jax);
    await checkComputations(jax, got, want, count, w);
  }
  const kept = hostBatch(1, 3);
  const got = await jaxTokens(jax, kept, { device, release: false });
  check(kept.releases === 0, 'release: false leaves the batch to the caller');
  for (const f of FIELDS) got[f].dispose();
}

async function checkComputations(
  jax: Jax,
  got: Awaited<ReturnType<typeof jaxTokens>>,
  want: ReturnType<typeof tokenValues>,
  count: number,
  w: Float32Array,
): Promise<void> {
  const n = count * SEQ;
  const reference = lossReference(want.inputs.subarray(0, n), want.labels.subarray(0, n), w);
  const loss = await lossInJax(jax, got.inputs, got.labels, w);
  check(Math.abs(loss - reference) < 1e-4 * Math.max(1, reference), `loss ${loss} vs reference ${reference}`);
  let dot = 0;
  for (let i = 0; i < n; i++) dot += want.docIds[i]! * want.positions[i]!;
  const got2 = await sumOfProducts(got.docIds, got.positions, jax.numpy);
  check(got2 === dot, `Σ docId·position ${got2} vs ${dot}`);
}

function deviceBatch(gpu: GpuContext, count: number, seed: number): DeviceTokenBatch & CountedRelease & { buffers: GPUBuffer[] } {
  const values = tokenValues(count, seed);
  const make = (f: (typeof FIELDS)[number]) => {
    const buffer = gpu.device.createBuffer({
      label: `jax test ${f}`,
      size: ROWS * SEQ * 4,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    gpu.device.queue.writeBuffer(buffer, 0, values[f]);
    return buffer;
  };
  const [inputs, labels, docIds, positions] = FIELDS.map(make) as [GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer];
  const batch = {
    inputs,
    labels,
    docIds,
    positions,
    buffers: [inputs, labels, docIds, positions],
    count,
    shape: [ROWS, SEQ] as const,
    keys: ['a', 'b'],
    releases: 0,
    // What the text loader's GPU ring does after release: the next batch is written over these buffers.
    release: () => {
      batch.releases++;
      for (const b of batch.buffers) gpu.device.queue.writeBuffer(b, 0, new Int32Array(ROWS * SEQ).fill(-9));
    },
  };
  return batch;
}

/**
 * A GPU batch on jax-js's own device (Tandem adopts it): copied GPU to GPU, values exact, the loss
 * equals the reference, and the refill of the released buffers does not reach jax-js.
 */
export async function deviceBatchIntoJax(jax: Jax): Promise<void> {
  const gpu = await acquireGpu({ device: jax.getWebGPUDevice() });
  const w = weights();
  for (const count of [2, ROWS]) {
    const batch = deviceBatch(gpu, count, 1 + count);
    const counted = await countReadbacks(() => jaxTokens(jax, batch));
    check(counted.readbacks === 0, `${describeReadbacks(counted)} readbacks while making the arrays`);
    const got = counted.result;
    const probe = await countReadbacks(() => got.labels.ref.data());
    check(probe.readbacks > 0, 'a jax-js read of a GPU array is counted (the counter sees jax-js)');
    check(batch.releases === 1, 'the batch is released once the copy is submitted');
    check(got.path === 'gpu' && got.inputs.device === 'webgpu', `path ${got.path} on ${got.inputs.device}`);
    assertEqual(got.keys, ['a', 'b'], 'keys');
    const want = tokenValues(count, 1 + count);
    await checkArraysEqual(got, want, count, jax);
    await checkComputations(jax, got, want, count, w);
    for (const b of batch.buffers) b.destroy();
  }
  await gpu.close();
}

/** Buffers of another device are refused with GpuError('device-mismatch'), and the batch is still released. */
export async function otherDeviceIsRefused(jax: Jax): Promise<void> {
  const other = await acquireGpu();
  check(other.device !== jax.getWebGPUDevice(), 'a second device');
  const batch = deviceBatch(other, 2, 0);
  await rejectsWith(jaxTokens(jax, batch), (e) => e instanceof GpuError && e.code === 'device-mismatch', 'another device');
  check(batch.releases === 1, 'released after the failure');
  for (const b of batch.buffers) b.destroy();
  await other.close();
}

/** Bad batches and options are typed errors; a GPU batch without jax-js's WebGPU backend says so. */
export async function badInputsAreTypedErrors(jax: Jax, hasWebGpu: boolean): Promise<void> {
  const over = { ...hostBatch(2, 0), count: ROWS + 1 };
  await rejectsWith(jaxTokens(jax, over), (e) => e instanceof FeedError && e.code === 'shape-mismatch', 'count past the rows');
  const short = { ...hostBatch(2, 0), labels: new Int32Array(5) };
  await rejectsWith(jaxTokens(jax, short), (e) => e instanceof FeedError && e.code === 'shape-mismatch', 'a short array');
  await rejectsWith(
    jaxTokens(jax, hostBatch(2, 0), { device: 'tpu' as jaxjs.Device }),
    (e) => e instanceof OptionError && e.field === 'device',
    'an unknown device',
  );
  const buffer = { size: ROWS * SEQ * 4, usage: 0x0004 | 0x0080 } as GPUBuffer;
  const gpuBatch = {
    inputs: buffer,
    labels: buffer,
    docIds: buffer,
    positions: buffer,
    count: 1,
    shape: [ROWS, SEQ] as const,
    keys: [],
    release() {},
  };
  await rejectsWith(
    jaxTokens(jax, gpuBatch, { device: 'wasm' }),
    (e) => e instanceof OptionError && e.field === 'device',
    'a GPU batch sent to wasm',
  );
  if (hasWebGpu) return;
  await rejectsWith(jaxTokens(jax, gpuBatch), (e) => e instanceof FeedError && e.code === 'no-webgpu-backend', 'no WebGPU backend');
  await rejectsWith(
    jaxTokens(jax, hostBatch(2, 0), { device: 'webgpu' }),
    (e) => e instanceof FeedError && e.code === 'no-webgpu-backend',
    'a CPU batch sent to an unstarted WebGPU backend',
  );
}

/** No rows: empty [0, seqLen] arrays, not a fill read from an empty array. */
export async function emptyBatchGivesEmptyArrays(jax: Jax, device: jaxjs.Device): Promise<void> {
  const got = await jaxTokens(jax, hostBatch(0, 0), { device });
  for (const f of FIELDS) {
    assertEqual(got[f].shape, [0, SEQ], `${f} shape`);
    check((await got[f].data()).length === 0, `${f} is empty`);
  }
}

/** A normalised image batch (the loader's DeviceBatch shape) on jax-js's device: float32 images and int32 labels, exact, for `count` rows. */
export async function deviceImagesIntoJax(jax: Jax): Promise<void> {
  const gpu = await acquireGpu({ device: jax.getWebGPUDevice() });
  const [rows, count, c, h, w] = [4, 3, 3, 2, 5];
  const pixels = Float32Array.from({ length: rows * c * h * w }, (_, i) => Math.cos(i) * 3);
  const labels = Int32Array.from([2, 0, 1, -1]);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const images = gpu.device.createBuffer({ size: pixels.byteLength, usage });
  const labelBuffer = gpu.device.createBuffer({ size: labels.byteLength, usage });
  gpu.device.queue.writeBuffer(images, 0, pixels);
  gpu.device.queue.writeBuffer(labelBuffer, 0, labels);
  let releases = 0;
  const release = () => {
    releases++;
    gpu.device.queue.writeBuffer(images, 0, new Float32Array(pixels.length));
  };
  const got = await jaxImages(jax, { count, shape: [count, c, h, w], images, labelBuffer, keys: ['x', 'y', 'z'], release });
  check(releases === 1, 'released once');
  assertEqual(got.images.shape, [count, c, h, w], 'images shape');
  check(got.images.dtype === jax.numpy.float32 && got.labels.dtype === jax.numpy.int32, 'dtypes');
  assertEqual(Array.from(await got.images.data()), Array.from(pixels.subarray(0, count * c * h * w)), 'images values');
  assertEqual(Array.from(await got.labels.data()), [2, 0, 1], 'labels values');
  images.destroy();
  labelBuffer.destroy();
  await gpu.close();
}

/**
 * textLoader() itself into jax-js: its CPU batches (and, given `onDevice`, its GPU batches on
 * jax-js's device) become arrays equal to the CPU loader's rows, `count` rows each.
 */
export async function textLoaderIntoJax(jax: Jax, device: jaxjs.Device, onDevice: boolean): Promise<void> {
  const { textLoader } = await import('../../src/text/index.ts');
  const { charEncoder, collect, sentences } = await import('./text-loader-scenarios.ts');
  const texts = sentences(12);
  const options = { tokenizer: charEncoder, seqLen: 16, batchSize: 3, bos: 0, eos: 1, pack: 'concat' as const };
  const want = (await collect({ texts }, options)).batches;
  check(want.length >= 2, `${want.length} batches`);
  const compare = async (got: Awaited<ReturnType<typeof jaxTokens>>, i: number) => {
    const w = want[i];
    check(w !== undefined && got.count === w.count, `batch ${i}: ${got.count} rows`);
    for (const f of FIELDS) assertEqual(Array.from(await got[f].data()), w[f].slice(0, w.count * 16), `batch ${i} ${f}`);
  };
  const gpu = onDevice ? await acquireGpu({ device: jax.getWebGPUDevice() }) : undefined;
  for (const to of gpu ? (['cpu', gpu] as const) : (['cpu'] as const)) {
    const data = textLoader({ texts }, { ...options, to });
    let i = 0;
    try {
      for await (const batch of data)
        await compare(await jaxTokens(jax, batch as HostTokenBatch | DeviceTokenBatch, { device: to === 'cpu' ? device : 'webgpu' }), i++);
      check(i === want.length, `${i} batches into jax-js, ${want.length} from the CPU loader`);
    } finally {
      await data.close();
    }
  }
  await gpu?.close();
  // `to: jax` itself: the loader makes the arrays (through its ring on jax-js's device when that is jax-js's default).
  const data = textLoader({ texts }, { ...options, to: jax as unknown as import('../../src/text/index.ts').JaxNamespace });
  let i = 0;
  try {
    for await (const batch of data) {
      check(batch.path === (jax.defaultDevice() === 'webgpu' ? 'gpu' : 'cpu'), `batch ${i}: the ${batch.path} path`);
      await compare(batch, i++);
      checkBatchEnds('JaxTokenBatch', batch, (x) => x.inputs);
    }
    check(i === want.length, `${i} batches from to: jax, ${want.length} from the CPU loader`);
  } finally {
    await data.close();
  }
}

/**
 * loader()'s `to: jax`: each batch as jax-js arrays (float32 images in the loader's layout, int32
 * labels), equal to what the same loader gives `to:` jax-js's GPU device, read back; the batch ends
 * as every batch does; `normalize: false` is refused by name.
 */
export async function imageLoaderIntoJax(jax: Jax): Promise<void> {
  const { loader } = await import('../../src/loader/index.ts');
  const { readBuffer } = await import('../../src/gpu/index.ts');
  const { sampleImages } = await import('./transfer-scenarios.ts');
  const items = sampleImages(7, 48);
  const options = { batchSize: 3, size: 16, threads: 2 } as const;
  const gpu = await acquireGpu({ device: jax.getWebGPUDevice() });
  const want: { images: number[]; labels: number[]; keys: string[] }[] = [];
  try {
    await using onGpu = loader(items, { ...options, to: gpu });
    for await (const b of onGpu) {
      const floats = new Float32Array(await readBuffer(gpu.device, b.images));
      want.push({ images: Array.from(floats.subarray(0, b.count * 3 * 16 * 16)), labels: Array.from(b.labels), keys: [...b.keys] });
      b.release();
    }
  } finally {
    await gpu.close();
  }
  check(want.length === 3, `${want.length} GPU batches`);
  await using data = loader(items, { ...options, to: jax as unknown as import('../../src/loader/index.ts').JaxNamespace });
  let i = 0;
  for await (const b of data) {
    const w = want[i++];
    check(w !== undefined, `batch ${i}: more batches than the GPU loader gave`);
    assertEqual(b.images.shape, [b.count, 3, 16, 16], `batch ${i} images shape`);
    check(b.images.dtype === jax.numpy.float32 && b.labels.dtype === jax.numpy.int32, `batch ${i} dtypes`);
    assertEqual(Array.from(await b.images.data()), w.images, `batch ${i} images`);
    assertEqual(Array.from(await b.labels.data()), w.labels, `batch ${i} labels`);
    assertEqual([...b.keys], w.keys, `batch ${i} keys`);
    checkBatchEnds('JaxImageBatch', b, (x) => x.images);
  }
  check(i === want.length, `${i} jax-js batches, ${want.length} GPU batches`);
  const held = data.held();
  check(held.batchBuffers === 0 && held.gpuSlots === 0, `still lent: ${JSON.stringify(held)}`);
  // A batch the consumer took keeps its arrays after release() (they are the caller's); the
  // batches the loader made ahead and dropped at the break have theirs disposed. jax.numpy.zeros
  // is watched to see every array the loader made.
  const made: { refCount: number }[] = [];
  const numpy = new Proxy(jax.numpy, {
    get: (target, key, receiver) =>
      key === 'zeros'
        ? (...args: Parameters<typeof jax.numpy.zeros>) => {
            const array = target.zeros(...args);
            made.push(array);
            return array;
          }
        : Reflect.get(target, key, receiver),
  });
  const watched = { ...jax, numpy } as unknown as import('../../src/loader/index.ts').JaxNamespace;
  const many = sampleImages(30, 48);
  let kept: { images: { refCount: number; dispose(): void }; labels: { refCount: number; dispose(): void } } | undefined;
  {
    await using ahead = loader(many, { ...options, to: watched });
    for await (const b of ahead) {
      kept = { images: b.images, labels: b.labels };
      // Held until the batches behind it are made (the sink holds two), so the break drops some.
      for (let t = 0; t < 250 && made.length <= 2; t++) await new Promise((resolve) => setTimeout(resolve, 20));
      b.release();
      break;
    }
  }
  check(kept !== undefined && kept.images.refCount > 0 && kept.labels.refCount > 0, 'the taken batch keeps its arrays after release()');
  const dropped = made.filter((a) => a !== kept?.images && a !== kept?.labels);
  check(dropped.length > 0, `the loader made batches ahead (${made.length} arrays)`);
  check(
    dropped.every((a) => a.refCount === 0),
    `the dropped batches' arrays are disposed (refCounts ${dropped.map((a) => a.refCount).join(',')})`,
  );
  kept?.images.dispose();
  kept?.labels.dispose();
  await using raw = loader(items, { ...options, to: jax as unknown as import('../../src/loader/index.ts').JaxNamespace, normalize: false });
  await rejectsWith(
    (async () => {
      for await (const b of raw) b.release();
    })(),
    (e) => e instanceof OptionError && e.field === 'normalize',
    'normalize: false with to: jax',
  );
}
