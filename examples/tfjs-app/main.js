// A TensorFlow.js model trained on batches from Tandem's loader, on one shared WebGPU device: the
// images (public/images/0.jpg … 7.jpg, two classes) are fetched, decoded on wasm threads,
// uploaded and normalised in WGSL, and become tensors without passing through the CPU.
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import * as tfl from '@tensorflow/tfjs-layers';
import { acquireGpu, loader } from 'tandem';
import { useDeviceForTfjs } from 'tandem/tfjs';

const out = document.getElementById('out');
try {
  const gpu = await acquireGpu();
  await useDeviceForTfjs(tf, WebGPUBackend, gpu); // tf.js's 'webgpu' backend on Tandem's device
  const files = Array.from({ length: 8 }, (_, i) => ({ url: `images/${i}.jpg`, label: i % 2 }));
  const data = loader(files, { batchSize: 4, size: 32, epochs: 3, to: tf, labels: 'one-hot', classes: 2 });

  const model = tfl.sequential({
    layers: [
      tfl.layers.conv2d({ inputShape: [32, 32, 3], filters: 4, kernelSize: 3, activation: 'relu' }),
      tfl.layers.globalAveragePooling2d({}),
      tfl.layers.dense({ units: 2 }),
    ],
  });
  const optimizer = tf.train.adam(0.01);
  const losses = [];
  try {
    for await (const { xs, ys, release } of data) {
      const loss = optimizer.minimize(() => tf.losses.softmaxCrossEntropy(ys, model.apply(xs, { training: true })), true);
      losses.push((await loss.data())[0]);
      loss.dispose();
      release(); // disposes xs and ys
    }
  } finally {
    await data.close();
  }
  const result = {
    backend: tf.getBackend(),
    path: data.output === 'tfjs-webgpu' ? 'webgpu' : data.output,
    steps: losses.length,
    lossFinite: losses.every(Number.isFinite),
    tensors: tf.memory().numTensors,
  };
  out.textContent = JSON.stringify(result);
  out.dataset.done = 'true';
} catch (error) {
  out.textContent = `error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
  out.dataset.done = 'error';
}
