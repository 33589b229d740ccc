// A TensorFlow.js model trained from Tandem's loader on the shared device: JPEGs of the built-in
// shapes (made in memory) → decode on wasm threads into batch buffers → upload + WGSL normalise →
// tf.tensor({ buffer }) → a small convolutional net trained with a custom loop. No readback of
// any kind happens while training, tf.js's own reads included (a loss read each step is the
// counter's control); held-out accuracy must pass a bar (4 classes: chance is 25%).
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import * as tfl from '@tensorflow/tfjs-layers';
import { DecodePool, type EncodedImage, ImageBatcher } from '../../src/decode/index.ts';
import { acquireGpu } from '../../src/gpu/index.ts';
import { PipelineBuilder } from '../../src/pipeline/index.ts';
import { encodeJpeg, hash3, renderSample } from '../../src/synthetic/index.ts';
import { TfjsFeeder, useDeviceForTfjs } from '../../src/tfjs/index.ts';
import { check } from './assert.ts';
import { countReadbacks } from './readbacks.ts';

export interface TfjsTrainingResult {
  heldAccuracy: number;
  readbacksWhileTraining: number;
  steps: number;
  seconds: number;
}

const SIZE = 32;
const CLASSES = 4;

function images(from: number, count: number, width: number): EncodedImage[] {
  return Array.from({ length: count }, (_, i) => {
    const s = renderSample(7, from + i, { width, height: Math.round((width * 3) / 4), classes: CLASSES });
    return { bytes: encodeJpeg(s.rgb, s.width, s.height, { quality: 90 }), label: s.label, key: `shape-${from + i}` };
  });
}

function model(): tfl.Sequential {
  const net = tfl.sequential();
  net.add(
    tfl.layers.conv2d({
      inputShape: [SIZE, SIZE, 3],
      filters: 8,
      kernelSize: 3,
      padding: 'same',
      activation: 'relu',
      kernelInitializer: tfl.initializers.heNormal({ seed: 1 }),
    }),
  );
  net.add(tfl.layers.maxPooling2d({ poolSize: 2 }));
  net.add(
    tfl.layers.conv2d({
      filters: 16,
      kernelSize: 3,
      padding: 'same',
      activation: 'relu',
      kernelInitializer: tfl.initializers.heNormal({ seed: 2 }),
    }),
  );
  net.add(tfl.layers.maxPooling2d({ poolSize: 2 }));
  net.add(tfl.layers.flatten());
  net.add(tfl.layers.dense({ units: CLASSES, kernelInitializer: tfl.initializers.glorotUniform({ seed: 3 }) }));
  return net;
}

/** Trains on `train` images for `epochs` through Tandem's loader and measures held-out accuracy. */
export async function tfjsTrainsFromTandemBatches(
  train = 512,
  held = 128,
  epochs = 6,
  batchSize = 32,
  imageWidth = 160,
  readLossEachStep = false,
): Promise<TfjsTrainingResult> {
  const gpu = await acquireGpu();
  const pool = await DecodePool.create({ threads: 2 });
  try {
    await useDeviceForTfjs(tf, WebGPUBackend, gpu);
    const feeder = await TfjsFeeder.create(tf, {
      batchSize,
      height: SIZE,
      width: SIZE,
      gpu,
      labels: 'one-hot',
      classes: CLASSES,
      mean: [0.5, 0.5, 0.5],
      std: [0.25, 0.25, 0.25],
    });
    const batcher = new ImageBatcher(pool, { batchSize, height: SIZE, width: SIZE, decode: { fit: 'cover' } });
    const loader = (items: EncodedImage[]) =>
      new PipelineBuilder().addSource(items).batch(batcher, { name: 'decode', concurrency: pool.maxInFlight }).addSink(2).build();
    const trainSet = images(0, train, imageWidth);
    const heldSet = images(train, held, imageWidth);
    const net = model();
    const optimizer = tf.train.adam(0.01);
    const started = performance.now();
    let steps = 0;
    const { readbacks } = await countReadbacks(
      async () => {
        for (let epoch = 0; epoch < epochs; epoch++) {
          const order = trainSet.map((item, i) => ({ item, r: hash3(99, epoch, i) })).sort((a, b) => a.r - b.r);
          for await (const batch of loader(order.map((o) => o.item))) {
            const { xs, ys } = await feeder.tensors(batch);
            const loss = optimizer.minimize(
              () => tf.losses.softmaxCrossEntropy(ys, net.apply(xs, { training: true }) as tf.Tensor) as tf.Scalar,
              readLossEachStep,
            );
            // The readback a training loop most often hides: the counter's control asks for it.
            if (loss) await loss.data();
            tf.dispose([xs, ys, ...(loss ? [loss] : [])]);
            steps++;
          }
        }
      },
      { tf },
    );
    const seconds = (performance.now() - started) / 1000;
    let correct = 0;
    for await (const batch of loader(heldSet)) {
      const { xs, ys } = await feeder.tensors(batch);
      const hits = tf.tidy(() => tf.sum(tf.cast(tf.equal(tf.argMax(net.predict(xs) as tf.Tensor, 1), tf.argMax(ys, 1)), 'int32')));
      correct += (await hits.data())[0]!;
      tf.dispose([xs, ys, hits]);
    }
    net.dispose();
    optimizer.dispose();
    await feeder.close();
    await batcher.close();
    return { heldAccuracy: correct / held, readbacksWhileTraining: readbacks, steps, seconds };
  } finally {
    tf.removeBackend('webgpu');
    await tf.setBackend('cpu');
    await pool.close();
    gpu.close();
  }
}

/**
 * The bar: 288 steps (1536 images of 320×240, 6 epochs) reach ≥ 45% held-out on the four shapes
 * (chance: 25%; 56% measured in Node on lavapipe), with no GPU→CPU readback during training.
 */
export async function tfjsModelLearnsShapes(): Promise<TfjsTrainingResult> {
  const r = await tfjsTrainsFromTandemBatches(1536, 256, 6, 32, 320);
  check(r.readbacksWhileTraining === 0, `${r.readbacksWhileTraining} readbacks while training`);
  check(r.heldAccuracy >= 0.45, `held-out accuracy ${(100 * r.heldAccuracy).toFixed(1)}% < 45%`);
  return r;
}

/**
 * Where the full run does not fit the tier (Node and Deno on lavapipe): 16 steps on the shared
 * device with every readback path watched, tf.js's own reads included; none may happen.
 */
export async function tfjsTrainsWithoutReadback(): Promise<TfjsTrainingResult> {
  const r = await tfjsTrainsFromTandemBatches(256, 32, 2, 32, 160);
  check(r.steps === 16, `${r.steps} steps`);
  check(r.readbacksWhileTraining === 0, `${r.readbacksWhileTraining} readbacks while training`);
  return r;
}

/** The control: the same loop reading its loss each step is seen, one tf.js read (at least) per step. */
export async function aLossReadEachStepIsCounted(): Promise<TfjsTrainingResult> {
  const r = await tfjsTrainsFromTandemBatches(64, 32, 1, 32, 96, true);
  check(r.steps === 2, `${r.steps} steps`);
  check(r.readbacksWhileTraining >= 2, `a loss read in each of ${r.steps} steps was counted ${r.readbacksWhileTraining} times`);
  return r;
}
