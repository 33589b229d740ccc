// The tf.js feed bench page: one model, one device, the same JPEGs, fed two ways, one timed pass
// per call from the orchestrator (bench/tfjs-feed.ts) through Playwright:
//   - "tfjs": TensorFlow.js's own input path as its docs show it: tf.data.generator over
//     createImageBitmap (resized by the browser) → tf.browser.fromPixels → float, normalise, batch;
//   - "tandem": Tandem's loader: wasm pthreads decode into batch buffers → upload ring → WGSL
//     normalise → tf.tensor({ buffer }) (tandem/tfjs), on the same device.
// Each pass either trains (one optimizer step per batch) or only makes the batches into tensors
// ("input"); it ends when the GPU has finished its last batch. GPU→CPU readbacks are counted.
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import * as tfdata from '@tensorflow/tfjs-data';
import * as tfl from '@tensorflow/tfjs-layers';
import { DecodePool, ImageBatcher } from '../../src/decode/index.ts';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { PipelineBuilder } from '../../src/pipeline/index.ts';
import { TfjsFeeder, useDeviceForTfjs } from '../../src/tfjs/index.ts';
import { countReadbacks } from '../../test/shared/readbacks.ts';

export type FeedPath = 'tfjs' | 'tandem';
export type FeedMode = 'input' | 'train';
export interface FeedSample {
  images: number;
  seconds: number;
  readbacks: number;
  batches: number;
}
export interface FeedPageApi {
  load(
    count: number,
    size: number,
    batch: number,
    threads: number,
  ): Promise<{ crossOriginIsolated: boolean; cores: number; backend: string }>;
  pass(path: FeedPath, mode: FeedMode): Promise<FeedSample>;
}
declare global {
  interface Window {
    tandemFeedBench?: FeedPageApi;
  }
}

const CLASSES = 4;
const MEAN = [0.485, 0.456, 0.406];
const STD = [0.229, 0.224, 0.225];
let blobs: Blob[] = [];
let items: { bytes: Uint8Array; label: number; key: string }[] = [];
let size = 64;
let batchSize = 32;
let gpu: GpuContext;
let pool: DecodePool;
let feeder: TfjsFeeder;
let net: tfl.Sequential;
let optimizer: tf.Optimizer;

function model(): tfl.Sequential {
  const m = tfl.sequential();
  m.add(tfl.layers.conv2d({ inputShape: [size, size, 3], filters: 8, kernelSize: 3, padding: 'same', activation: 'relu' }));
  m.add(tfl.layers.maxPooling2d({ poolSize: 2 }));
  m.add(tfl.layers.conv2d({ filters: 16, kernelSize: 3, padding: 'same', activation: 'relu' }));
  m.add(tfl.layers.maxPooling2d({ poolSize: 2 }));
  m.add(tfl.layers.flatten());
  m.add(tfl.layers.dense({ units: CLASSES }));
  return m;
}

function step(xs: tf.Tensor, ys: tf.Tensor, mode: FeedMode): void {
  if (mode === 'train') {
    optimizer.minimize(() => tf.losses.softmaxCrossEntropy(ys, net.apply(xs, { training: true }) as tf.Tensor) as tf.Scalar, false);
  } else {
    // The batch must exist on the device: a tiny reduction consumes it (its result is not read).
    tf.dispose(tf.sum(xs));
  }
}

/** TensorFlow.js's own path, as its guide writes an image pipeline. */
async function tfjsPass(mode: FeedMode): Promise<number> {
  const mean = tf.tensor1d(MEAN);
  const std = tf.tensor1d(STD);
  const images = tfdata.generator(async function* () {
    for (const [i, blob] of blobs.entries()) {
      const bitmap = await createImageBitmap(blob, { resizeWidth: size, resizeHeight: size, resizeQuality: 'low' });
      const xs = tf.tidy(() => tf.div(tf.sub(tf.div(tf.cast(tf.browser.fromPixels(bitmap), 'float32'), 255), mean), std));
      bitmap.close();
      yield { xs, ys: tf.oneHot(items[i]!.label, CLASSES) };
    }
  });
  const dataset = images.batch(batchSize).prefetch(2);
  const iterator = await dataset.iterator();
  let batches = 0;
  for (let r = await iterator.next(); !r.done; r = await iterator.next()) {
    const { xs, ys } = r.value as { xs: tf.Tensor; ys: tf.Tensor };
    step(xs, ys, mode);
    tf.dispose([xs, ys]);
    batches++;
  }
  tf.dispose([mean, std]);
  return batches;
}

async function tandemPass(mode: FeedMode): Promise<number> {
  const batcher = new ImageBatcher(pool, { batchSize, height: size, width: size, decode: { fit: 'stretch' } });
  const pipeline = new PipelineBuilder()
    .addSource(items)
    .batch(batcher, { name: 'decode', concurrency: pool.maxInFlight })
    .addSink(2)
    .build();
  let batches = 0;
  for await (const batch of pipeline) {
    const { xs, ys } = await feeder.tensors(batch);
    step(xs, ys, mode);
    tf.dispose([xs, ys]);
    batches++;
  }
  await batcher.close();
  return batches;
}

const api: FeedPageApi = {
  async load(count, imageSize, batch, threads) {
    size = imageSize;
    batchSize = batch;
    const fetched = await Promise.all(
      Array.from({ length: count }, async (_, i) => new Uint8Array(await (await fetch(`/bench-assets/image/${i}`)).arrayBuffer())),
    );
    items = fetched.map((bytes, i) => ({ bytes, label: i % CLASSES, key: `image-${i}` }));
    blobs = fetched.map((bytes) => new Blob([bytes], { type: 'image/jpeg' }));
    gpu = await acquireGpu();
    await useDeviceForTfjs(tf, WebGPUBackend, gpu);
    pool = await DecodePool.create({ threads });
    feeder = await TfjsFeeder.create(tf, {
      batchSize,
      height: size,
      width: size,
      gpu,
      labels: 'one-hot',
      classes: CLASSES,
      mean: MEAN,
      std: STD,
    });
    net = model();
    optimizer = tf.train.sgd(0.01);
    return { crossOriginIsolated, cores: navigator.hardwareConcurrency, backend: tf.getBackend() };
  },

  async pass(path, mode) {
    const started = performance.now();
    const { result: batches, readbacks } = await countReadbacks(() => (path === 'tfjs' ? tfjsPass(mode) : tandemPass(mode)), { tf });
    // Ends when the GPU has run everything: tf.js's pending commands submitted, then
    // onSubmittedWorkDone (not a readback).
    const backend = tf.backend() as WebGPUBackend;
    backend.ensureCommandEncoderReady();
    backend.submitQueue();
    await gpu.device.queue.onSubmittedWorkDone();
    const seconds = (performance.now() - started) / 1000;
    return { images: items.length, seconds, readbacks, batches };
  },
};
window.tandemFeedBench = api;
document.getElementById('status')!.textContent = 'ready';
