// A TensorFlow.js model trained on batches from Tandem's loader, on one shared WebGPU device: the
// images (public/images/0.jpg … 7.jpg, two classes) are decoded on wasm threads, uploaded and
// normalised in WGSL, and become tensors without passing through the CPU.
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import * as tfl from '@tensorflow/tfjs-layers';
import { acquireGpu, DecodePool, ImageBatcher, PipelineBuilder } from 'tandem';
import { TfjsFeeder, useDeviceForTfjs } from 'tandem/tfjs';

const out = document.getElementById('out');
try {
  const gpu = await acquireGpu();
  await useDeviceForTfjs(tf, WebGPUBackend, gpu); // tf.js's 'webgpu' backend on Tandem's device
  const pool = await DecodePool.create({ threads: 2 });
  const feeder = await TfjsFeeder.create(tf, { batchSize: 4, height: 32, width: 32, gpu, labels: 'one-hot', classes: 2 });

  const model = tfl.sequential({
    layers: [
      tfl.layers.conv2d({ inputShape: [32, 32, 3], filters: 4, kernelSize: 3, activation: 'relu' }),
      tfl.layers.globalAveragePooling2d({}),
      tfl.layers.dense({ units: 2 }),
    ],
  });
  const optimizer = tf.train.adam(0.01);
  const fetchBytes = async (url) => new Uint8Array(await (await fetch(url)).arrayBuffer());
  const files = Array.from({ length: 8 }, (_, i) => ({ url: `images/${i}.jpg`, label: i % 2 }));
  const batcher = new ImageBatcher(pool, { batchSize: 4, height: 32, width: 32, decode: { fit: 'cover' } });

  const losses = [];
  for (let epoch = 0; epoch < 3; epoch++) {
    const pipeline = new PipelineBuilder()
      .addSource(files)
      .pipe(async (f) => ({ bytes: await fetchBytes(f.url), label: f.label }), { name: 'fetch', concurrency: 8 })
      .batch(batcher, { name: 'decode', concurrency: pool.maxInFlight })
      .addSink(2)
      .build();
    for await (const batch of pipeline) {
      const { xs, ys } = await feeder.tensors(batch); // the batch goes back to the batcher
      const loss = optimizer.minimize(() => tf.losses.softmaxCrossEntropy(ys, model.apply(xs, { training: true })), true);
      losses.push((await loss.data())[0]);
      tf.dispose([xs, ys, loss]);
    }
  }
  const result = {
    backend: tf.getBackend(),
    path: feeder.path,
    steps: losses.length,
    lossFinite: losses.every(Number.isFinite),
    tensors: tf.memory().numTensors,
  };
  await feeder.close();
  await pool.close();
  out.textContent = JSON.stringify(result);
  out.dataset.done = 'true';
} catch (error) {
  out.textContent = `error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
  out.dataset.done = 'error';
}
