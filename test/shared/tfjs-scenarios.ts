// TensorFlow.js fed by Tandem, runtime-neutral (Node with dawn, Deno, Chromium); each scenario
// throws on failure. The WebGPU path is checked against the CPU path's values and for readbacks.
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import { acquireGpu, FeedError, GpuError, type GpuContext, type HostBatch } from '../../src/gpu/index.ts';
import { normalizeByHand } from './normalize-by-hand.ts';
import { DecodePool } from '../../src/decode/index.ts';
import { BatchReleasedError } from '../../src/errors/index.ts';
import { loader, type TensorBatch } from '../../src/loader/index.ts';
import type { ClipTensorBatch } from '../../src/video/index.ts';
import { sampleImages } from './transfer-scenarios.ts';
import { TfjsFeeder, useDeviceForTfjs, tfjsDevice } from '../../src/tfjs/index.ts';
import { assertEqual, check, maxAbsDiff, rejectsWith } from './assert.ts';
import { countReadbacks, describeReadbacks } from './readbacks.ts';
import { checkBatchEnds } from './batch-ends.ts';

const SHAPE = { batchSize: 4, height: 6, width: 5, channels: 3 } as const;

/** A host batch of `count` images whose bytes follow `seed`; release() is counted and the data then throws. */
export function hostBatch(
  sequence: number,
  count: number,
  seed: number,
  shape: { batchSize: number; height: number; width: number; channels: number } = SHAPE,
): HostBatch & { releases: number } {
  const { batchSize, height, width, channels } = shape;
  const bytes = new Uint8Array(Math.ceil((batchSize * height * width * channels) / 4) * 4);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + seed * 97 + 7) & 0xff;
  let released = false;
  const batch = {
    sequence,
    count,
    shape: [count, height, width, channels] as const,
    get data() {
      if (released) throw new Error(`batch ${sequence} was used after release()`);
      return bytes;
    },
    labels: Int32Array.from({ length: batchSize }, (_, i) => (i + seed) % 3),
    keys: Array.from({ length: count }, (_, i) => `b${sequence}-${i}`),
    releases: 0,
    release() {
      if (released) throw new Error(`batch ${sequence} released twice`);
      released = true;
      batch.releases++;
    },
  };
  return batch;
}

async function withTfjsOnTandem<T>(fn: (gpu: GpuContext) => Promise<T>): Promise<T> {
  const gpu = await acquireGpu();
  try {
    await useDeviceForTfjs(tf, WebGPUBackend, gpu);
    const device = await tfjsDevice(tf);
    check(
      device === gpu.device,
      `TensorFlow.js's backend (${tf.getBackend()}, device ${device ? 'another' : 'none'}) runs on Tandem's device`,
    );
    return await fn(gpu);
  } finally {
    tf.removeBackend('webgpu');
    await tf.setBackend('cpu');
    gpu.close();
  }
}

/**
 * On the shared device, batches become tensors with no readback, equal to the CPU path's values
 * (NHWC and NCHW, int and one-hot labels, a short last batch), and the batch is released.
 */
export async function webgpuTensorsMatchCpuWithoutReadback(): Promise<void> {
  await withTfjsOnTandem(async (gpu) => {
    for (const layout of ['NHWC', 'NCHW'] as const) {
      const feeder = await TfjsFeeder.create(tf, {
        ...SHAPE,
        layout,
        gpu,
        labels: 'one-hot',
        classes: 3,
        mean: [0.5, 0.4, 0.3],
        std: [0.2, 0.25, 0.3],
      });
      check(feeder.path === 'webgpu', `feeder path ${feeder.path}`);
      for (const count of [4, 3]) {
        const batch = hostBatch(count, count, count);
        const want = normalizeByHand(
          batch.data.subarray(0, count * 90),
          { images: count, height: 6, width: 5, channels: 3 },
          { layout, mean: [0.5, 0.4, 0.3], std: [0.2, 0.25, 0.3] },
        );
        const counted = await countReadbacks(() => feeder.tensors(batch), { tf });
        const { result, readbacks } = counted;
        check(readbacks === 0, `${describeReadbacks(counted)} GPU→CPU readbacks while making tensors`);
        check(batch.releases === 1, 'the batch was released once');
        const { xs, ys, keys } = result;
        const expectShape = layout === 'NHWC' ? [count, 6, 5, 3] : [count, 3, 6, 5];
        check(xs.shape.join() === expectShape.join(), `xs shape ${xs.shape} (${layout})`);
        const got = await xs.data();
        const err = maxAbsDiff(got, want);
        check(err < 1e-5, `${layout} tensor (${got.length} values) differs from the CPU normalisation (${want.length}) by ${err}`);
        check(ys.shape.join() === `${count},3` && ys.dtype === 'float32', `one-hot ys ${ys.shape} ${ys.dtype}`);
        const hot = await ys.data();
        for (let i = 0; i < count; i++) check(hot[i * 3 + batch.labels[i]!] === 1, `one-hot row ${i}`);
        check(keys.length === count, 'keys');
        tf.dispose([xs, ys]);
      }
      // An unlabelled row (−1) is all zeros, as tf.oneHot makes it; a label past the classes is refused.
      const unlabelled = hostBatch(5, 3, 1);
      unlabelled.labels[1] = -1;
      const { xs, ys } = await feeder.tensors(unlabelled);
      assertEqual(
        Array.from(await ys.data()),
        Array.from(await tf.oneHot(tf.tensor1d([1, -1, 0], 'int32'), 3).data()),
        'a −1 row as tf.oneHot makes it',
      );
      tf.dispose([xs, ys]);
      const outside = hostBatch(6, 3, 1);
      outside.labels[2] = 3;
      await rejectsWith(feeder.tensors(outside), (e) => e instanceof FeedError && e.code === 'shape-mismatch', 'a label past the classes');
      await feeder.close();
    }
  });
}

/**
 * Tensors a model keeps across steps stay intact while Tandem's ring buffers are refilled, and
 * the tensor count stays flat over many batches.
 */
export async function keptTensorsSurviveReuseAndMemoryStaysFlat(): Promise<void> {
  await withTfjsOnTandem(async (gpu) => {
    const feeder = await TfjsFeeder.create(tf, { ...SHAPE, gpu });
    const first = hostBatch(0, 4, 100);
    const want = normalizeByHand(first.data.subarray(0, 360), { images: 4, height: 6, width: 5, channels: 3 }, { layout: 'NHWC' });
    const kept = await feeder.tensors(first);
    const before = tf.memory().numTensors;
    for (let i = 1; i <= 40; i++) {
      const { xs, ys } = await feeder.tensors(hostBatch(i, 4, 100 + i));
      tf.dispose(tf.tidy(() => tf.sum(tf.mul(xs, 2))));
      tf.dispose([xs, ys]);
    }
    check(tf.memory().numTensors === before, `tensors went from ${before} to ${tf.memory().numTensors} over 40 batches`);
    const err = maxAbsDiff(await kept.xs.data(), want);
    check(err < 1e-5, `a kept tensor changed by ${err} after 40 more batches went through the ring`);
    check((await kept.ys.data()).join() === '1,2,0,1', `int labels ${await kept.ys.data()}`);
    tf.dispose([kept.xs, kept.ys]);
    await feeder.close();
  });
}

/** On TensorFlow.js's CPU backend the same batch gives the same values (no GPU involved), in either layout. */
export async function cpuBackendTensorsMatch(): Promise<void> {
  await tf.setBackend('cpu');
  for (const layout of ['NCHW', 'NHWC'] as const) {
    const feeder = await TfjsFeeder.create(tf, { ...SHAPE, layout });
    check(feeder.path === 'cpu', `feeder path ${feeder.path}`);
    const batch = hostBatch(1, 2, 5);
    const want = normalizeByHand(batch.data.subarray(0, 180), { images: 2, height: 6, width: 5, channels: 3 }, { layout });
    const { xs, ys } = await feeder.tensors(batch);
    check(batch.releases === 1, 'released');
    check(xs.shape.join() === (layout === 'NCHW' ? '2,3,6,5' : '2,6,5,3'), `xs shape ${xs.shape}`);
    check(maxAbsDiff(await xs.data(), want) < 1e-6, `cpu values (${layout})`);
    check(ys.dtype === 'int32' && ys.shape.join() === '2', `ys ${ys.dtype} ${ys.shape}`);
    tf.dispose([xs, ys]);
    await feeder.close();
  }
}

/** Each misuse is a typed error that names what is wrong. */
export async function misuseGivesTypedErrors(): Promise<void> {
  await withTfjsOnTandem(async (gpu) => {
    const feeder = await TfjsFeeder.create(tf, { ...SHAPE, gpu });
    const released = hostBatch(0, 4, 1);
    released.release();
    await rejectsWith(feeder.tensors(released), (e) => e instanceof BatchReleasedError && e.code === 'batch-released', 'a released batch');
    const wrong = hostBatch(1, 4, 1, { batchSize: 4, height: 7, width: 5, channels: 3 });
    await rejectsWith(
      feeder.tensors(wrong),
      (e) => e instanceof FeedError && e.code === 'shape-mismatch' && /4×7×5×3/.test(e.message),
      'a batch of another shape',
    );
    check(wrong.releases === 1, 'a refused batch is still released');
    const other = await acquireGpu();
    try {
      await rejectsWith(
        TfjsFeeder.create(tf, { ...SHAPE, gpu: other }),
        (e) => e instanceof GpuError && e.code === 'device-mismatch',
        "a GpuContext that is not TensorFlow.js's device",
      );
    } finally {
      other.close();
    }
    await rejectsWith(
      TfjsFeeder.create(tf, { ...SHAPE, labels: 'one-hot' }),
      (e) => e instanceof FeedError && e.code === 'shape-mismatch',
      'one-hot without classes',
    );
    await feeder.close();
    await rejectsWith(feeder.tensors(hostBatch(2, 4, 1)), (e) => e instanceof FeedError && e.code === 'closed', 'a closed feeder');
  });
}

/** TensorFlow.js's own device adopted by Tandem: no second device, close() leaves it alive. */
export async function tandemAdoptsTfjsDevice(): Promise<void> {
  const own = await acquireGpu();
  try {
    await useDeviceForTfjs(tf, WebGPUBackend, own);
    const device = (await tfjsDevice(tf))!;
    const adopted = await acquireGpu({ device });
    check(!adopted.owned && adopted.device === device, 'adopted, not owned');
    const feeder = await TfjsFeeder.create(tf, SHAPE);
    check(feeder.path === 'webgpu', 'feeder on the adopted device');
    adopted.close();
    const { xs, ys } = await feeder.tensors(hostBatch(0, 4, 3));
    check((await xs.data()).length === 360, 'the device still works after the adopting context closed');
    tf.dispose([xs, ys]);
    await feeder.close();
  } finally {
    tf.removeBackend('webgpu');
    await tf.setBackend('cpu');
    own.close();
  }
}

/** `run` on tf.js's CPU backend, then on its WebGPU backend over Tandem's device, where it may read nothing back. */
async function onBothBackends(run: (path: 'cpu' | 'webgpu') => Promise<number>, who: string): Promise<void> {
  await tf.setBackend('cpu');
  await run('cpu');
  await withTfjsOnTandem(async () => {
    const readbacks = await run('webgpu');
    check(readbacks === 0, `${readbacks} GPU→CPU readbacks while ${who} made tensors on the GPU`);
  });
}

/**
 * Every batch of `data`, taken first and checked afterwards, so that on the WebGPU path only the
 * loader's own GPU→CPU readbacks are counted.
 */
async function takeAll<B>(data: AsyncIterable<B>, path: string): Promise<{ taken: B[]; readbacks: number }> {
  const taken: B[] = [];
  const take = async () => {
    for await (const batch of data) taken.push(batch);
  };
  const readbacks = path === 'cpu' ? (await take(), 0) : (await countReadbacks(take, { tf })).readbacks;
  return { taken, readbacks };
}

/**
 * `loader(source, { to: tf })` on the WebGPU backend and on the CPU backend: tensors equal the
 * CPU normalisation of the pixels the decode pool gives for the same files, one-hot labels from
 * the items, no readback on the GPU path, and release() disposes both tensors.
 */
export async function loaderGivesTensors(): Promise<void> {
  const files = sampleImages(5, 64);
  await using pool = await DecodePool.create({ threads: 2 });
  const size = 12;
  const reference = async (keys: readonly string[]) => {
    const pixels = new Uint8Array(keys.length * size * size * 3);
    for (const [row, key] of keys.entries()) {
      const file = files.find((f) => f.key === key)!;
      pixels.set((await pool.decode(file.bytes, { width: size, height: size, fit: 'cover' })).pixels, row * size * size * 3);
    }
    return normalizeByHand(pixels, { images: keys.length, height: size, width: size, channels: 3 }, { layout: 'NHWC' });
  };
  const run = async (path: string) => {
    const before = tf.memory().numTensors;
    await using data = loader(files, { batchSize: 3, size, to: tf, labels: 'one-hot', classes: 4, pool });
    const { taken, readbacks } = await takeAll<TensorBatch>(data, path);
    let rows = 0;
    for (const batch of taken) {
      check(batch.xs.shape.join() === `${batch.count},${size},${size},3`, `${path}: xs ${batch.xs.shape}`);
      const err = maxAbsDiff(await batch.xs.data(), await reference(batch.keys));
      check(err < 1e-5, `${path}: tensor differs from the CPU reference by ${err}`);
      const hot = await batch.ys.data();
      for (const [row, key] of batch.keys.entries()) check(hot[row * 4 + files.find((f) => f.key === key)!.label!] === 1, `one-hot ${key}`);
      rows += batch.count;
      checkBatchEnds('TensorBatch', batch, (b) => b.xs);
    }
    check(rows === files.length, `${path}: ${rows} rows`);
    check(data.output === `tfjs-${path}`, `${path}: loader output ${data.output}`);
    check(tf.memory().numTensors === before, `${path}: release() disposed the tensors (${tf.memory().numTensors - before} left)`);
    return readbacks;
  };
  await onBothBackends(run, 'the loader');
}

/**
 * The readback counter's control for tf.js: reads of a tensor on the WebGPU backend (data, array,
 * and dataSync where it cannot work for want of a canvas) are counted, as tfjs-read and as the
 * buffer map underneath; a tensor of the CPU backend read the same way counts nothing. dataSync is
 * not called in a page: there it copies into a canvas texture, which destroys the device in
 * headless Chromium on lavapipe (readback-scenarios.ts).
 */
export async function tfjsReadsAreCounted(): Promise<void> {
  await withTfjsOnTandem(async () => {
    const r = await countReadbacks(
      async () => {
        // Large enough that the backend runs the op on the GPU rather than forwarding it to the CPU.
        const y = tf.tidy(() => tf.add(tf.range(0, 4096), 1));
        const values = await y.data();
        check(values[0] === 1 && values[4095] === 4096, `values ${values[0]}…${values[4095]}`);
        await y.array();
        if (typeof OffscreenCanvas === 'undefined') {
          const z = tf.tidy(() => tf.mul(y, 2));
          try {
            z.dataSync();
          } catch {
            // No canvas to read through in this runtime: the attempt is what is counted.
          }
          z.dispose();
        }
        y.dispose();
      },
      { tf },
    );
    const syncReads = typeof OffscreenCanvas === 'undefined' ? 1 : 0;
    check(r.kinds['tfjs-read'] === 2 + syncReads, `tfjs-read counted ${describeReadbacks(r)}, ${2 + syncReads} expected`);
    check(r.kinds['map-read'] >= 1 && r.kinds['copy-to-map-read'] >= 1, `the map underneath: ${describeReadbacks(r)}`);
  });
  const onCpu = await countReadbacks(
    async () => {
      const y = tf.tidy(() => tf.add(tf.tensor1d([1, 2, 3]), 1));
      await y.data();
      y.dataSync();
      y.dispose();
    },
    { tf },
  );
  check(tf.getBackend() === 'cpu' && onCpu.readbacks === 0, `CPU-backend reads counted: ${describeReadbacks(onCpu)}`);
}

export const tfjsScenarios = {
  'tfjs: the readback counter sees reads of WebGPU tensors (data, array, dataSync) and not of CPU tensors': tfjsReadsAreCounted,
  'tfjs: WebGPU tensors on the shared device equal the CPU path, with no readback': webgpuTensorsMatchCpuWithoutReadback,
  'tfjs: kept tensors survive ring reuse; numTensors stays flat': keptTensorsSurviveReuseAndMemoryStaysFlat,
  'tfjs: the CPU backend gets the same values, NCHW and NHWC': cpuBackendTensorsMatch,
  'tfjs: misuse gives typed errors': misuseGivesTypedErrors,
  'tfjs: Tandem adopts TensorFlow.js device without owning it': tandemAdoptsTfjsDevice,
  'tfjs: loader(to: tf) gives tensors equal to the CPU reference, disposed by release()': loaderGivesTensors,
};

/**
 * `videoLoader(source, { to: tf })` on the CPU and the WebGPU backends: xs float32 [count, frames,
 * H, W, 3] equal to the same loader's CPU clips normalised by hand, ys its labels, the same keys and
 * frame times; no readback on the GPU path; release() disposes both tensors.
 */
export async function videoLoaderGivesTensors(load: (name: string) => Promise<Uint8Array>): Promise<void> {
  const { videoLoader } = await import('../../src/video/index.ts');
  const { CLIP_FIXTURES } = await import('./video-loader-scenarios.ts');
  const items = await Promise.all(CLIP_FIXTURES.map(async (name, label) => ({ bytes: await load(name), label, key: name })));
  await using pool = await DecodePool.create({ threads: 2 });
  const options = {
    clip: { frames: 3, stride: 2 },
    clipsPerVideo: 2,
    size: 8,
    batchSize: 3,
    mean: [0.4, 0.5, 0.6],
    std: [0.2, 0.25, 0.3],
    pool,
  } as const;
  const want = new Map<string, { floats: Float32Array; label: number; times: number[] }>();
  {
    await using cpu = videoLoader(items, options);
    for await (const b of cpu) {
      const floats = normalizeByHand(
        b.data,
        { images: b.count * 3, height: 8, width: 8, channels: 3 },
        { layout: 'NHWC', mean: options.mean, std: options.std },
      );
      const clip = 3 * 8 * 8 * 3;
      for (const [i, key] of b.keys.entries())
        want.set(key, {
          floats: floats.slice(i * clip, (i + 1) * clip),
          label: b.labels[i] ?? -2,
          times: Array.from(b.frameTimes.subarray(i * 3, i * 3 + 3)),
        });
      b.release();
    }
  }
  check(want.size === 2 * items.length, `${want.size} CPU clips`);
  const run = async (path: string) => {
    const before = tf.memory().numTensors;
    await using data = videoLoader(items, { ...options, to: tf });
    const { taken, readbacks } = await takeAll<ClipTensorBatch>(data, path);
    let clips = 0;
    for (const batch of taken) {
      check(batch.xs.shape.join() === `${batch.count},3,8,8,3`, `${path}: xs ${batch.xs.shape}`);
      const xs = await batch.xs.data();
      const ys = await batch.ys.data();
      for (const [i, key] of batch.keys.entries()) {
        const w = want.get(key);
        check(w !== undefined, `${path}: clip ${key} was not a CPU clip`);
        const err = maxAbsDiff(xs.subarray(i * w.floats.length, (i + 1) * w.floats.length), w.floats);
        check(err < 1e-5, `${path}: ${key} differs from the CPU clip normalised by hand by ${err}`);
        check(ys[i] === w.label, `${path}: ${key} label ${ys[i]}, expected ${w.label}`);
        check(Array.from(batch.frameTimes.subarray(i * 3, i * 3 + 3)).join() === w.times.join(), `${path}: ${key} frame times`);
      }
      clips += batch.count;
      checkBatchEnds('ClipTensorBatch', batch, (b) => b.xs);
    }
    check(clips === want.size, `${path}: ${clips} clips`);
    check(tf.memory().numTensors === before, `${path}: release() disposed the tensors (${tf.memory().numTensors - before} left)`);
    return readbacks;
  };
  await onBothBackends(run, 'the video loader');
}
