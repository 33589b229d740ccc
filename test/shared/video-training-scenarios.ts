// A TensorFlow.js clip classifier trained from videoLoader() on the shared device: the generated
// moving-shapes videos (class = direction of motion; one frame tells nothing) → clips sampled per
// (seed, epoch, video) → WebCodecs (or wasm) decode straight into GPU batch buffers →
// tf.tensor({ buffer }) → motion-energy features → a small MLP. No readback of any kind
// happens while training; held-out accuracy must pass a bar (4 classes: chance is 25%).
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import * as tfl from '@tensorflow/tfjs-layers';
import { acquireGpu } from '../../src/gpu/index.ts';
import { MOTION_NAMES, motionLabelFor } from '../../src/synthetic/index.ts';
import { useDeviceForTfjs } from '../../src/tfjs/index.ts';
import type { LoaderSource } from '../../src/loader/index.ts';
import { type VideoBackend, type VideoDeviceBatch, videoLoader } from '../../src/video/index.ts';
import { check } from './assert.ts';
import { countReadbacks } from './readbacks.ts';

export interface VideoTrainingResult {
  heldAccuracy: number;
  readbacksWhileTraining: number;
  steps: number;
  seconds: number;
  roads: { webcodecs: number; wasm: number };
}

const FRAMES = 4,
  SIZE = 32,
  CLASSES = 4,
  BATCH = 8;

/**
 * The classifier's fixed first stage, motion energy: for each clip, the brightness change between
 * neighbouring frames times the spatial gradient, averaged and divided by the gradient's energy:
 * a shape moving by (u, v) gives about (−u, −v), whatever its contrast. [B, F, H, W, 3] → [B, 2].
 */
function motionEnergy(x: tf.Tensor): tf.Tensor2D {
  return tf.tidy(() => {
    const g = tf.mean(x, 4); // [B, F, H, W]
    const t = FRAMES - 1,
      inner = SIZE - 2;
    const earlier = tf.slice(g, [0, 0, 0, 0], [-1, t, -1, -1]);
    const later = tf.slice(g, [0, 1, 0, 0], [-1, t, -1, -1]);
    const it = tf.slice(tf.sub(later, earlier), [0, 0, 1, 1], [-1, t, inner, inner]);
    const gx = tf.sub(tf.slice(earlier, [0, 0, 1, 2], [-1, t, inner, inner]), tf.slice(earlier, [0, 0, 1, 0], [-1, t, inner, inner]));
    const gy = tf.sub(tf.slice(earlier, [0, 0, 2, 1], [-1, t, inner, inner]), tf.slice(earlier, [0, 0, 0, 1], [-1, t, inner, inner]));
    const axes = [1, 2, 3];
    const u = tf.div(tf.mean(tf.mul(it, gx), axes), tf.add(tf.mean(tf.mul(gx, gx), axes), 1e-3));
    const v = tf.div(tf.mean(tf.mul(it, gy), axes), tf.add(tf.mean(tf.mul(gy, gy), axes), 1e-3));
    return tf.stack([u, v], 1) as tf.Tensor2D;
  });
}

/** The learned part: a small MLP from the two motion-energy features to the four directions. */
function model(): tfl.Sequential {
  const net = tfl.sequential();
  net.add(tfl.layers.dense({ inputShape: [2], units: 16, activation: 'relu', kernelInitializer: tfl.initializers.heNormal({ seed: 1 }) }));
  net.add(tfl.layers.dense({ units: CLASSES, kernelInitializer: tfl.initializers.glorotUniform({ seed: 3 }) }));
  return net;
}

/** The clip tensor of a batch: tf.js copies the buffer on the GPU and submits the copy before returning, so the batch can be released at once. */
function clipsOf(batch: VideoDeviceBatch): tf.Tensor {
  return tf.tensor({ buffer: batch.clips }, [batch.count, FRAMES, SIZE, SIZE, 3], 'float32');
}

/**
 * Trains on `train` (a labelled list the loader takes: folder files or URLs) for `epochs`, two
 * random clips per video per epoch, and measures accuracy on one centred clip of each `held` video.
 */
export async function videoClassifierTrains(
  train: LoaderSource,
  held: LoaderSource,
  epochs: number,
  backend: VideoBackend,
): Promise<VideoTrainingResult> {
  const gpu = await acquireGpu();
  try {
    await useDeviceForTfjs(tf, WebGPUBackend, gpu);
    const common = {
      clip: { frames: FRAMES, stride: 3 },
      size: SIZE,
      batchSize: BATCH,
      to: gpu,
      backend,
      mean: [0.5, 0.5, 0.5],
      std: [0.25, 0.25, 0.25],
    } as const;
    const trainData = videoLoader(train, { ...common, sampler: 'random', clipsPerVideo: 2, shuffle: true, seed: 5, epochs });
    const net = model();
    const optimizer = tf.train.adam(0.03);
    const started = performance.now();
    let steps = 0;
    const { readbacks } = await countReadbacks(
      async () => {
        for await (const batch of trainData) {
          const xs = clipsOf(batch);
          const ys = tf.oneHot(tf.tensor1d(batch.labels, 'int32'), CLASSES);
          batch.release();
          const loss = optimizer.minimize(
            () => tf.losses.softmaxCrossEntropy(ys, net.apply(motionEnergy(xs), { training: true }) as tf.Tensor) as tf.Scalar,
            false,
          );
          tf.dispose([xs, ys, ...(loss ? [loss] : [])]);
          steps++;
          // The GPU is kept within a few steps of the loop (a fence, not a readback), as a training loop reading its loss now and then would be.
          if (steps % 4 === 0) await trainData.waitFor(gpu.device.queue.onSubmittedWorkDone());
        }
      },
      { tf },
    );
    const seconds = (performance.now() - started) / 1000;
    const roads = trainData.roads();
    check(trainData.failures().length === 0, `training failures: ${trainData.failures().map((f) => `${f.key}: ${f.error}`)}`);
    await trainData.close(); // its decoders and GPU buffers go before the evaluation's are made
    let correct = 0,
      total = 0;
    await using heldData = videoLoader(held, { ...common, sampler: 'uniform', clipsPerVideo: 1 });
    for await (const batch of heldData) {
      const xs = clipsOf(batch);
      const labels = tf.tensor1d(batch.labels, 'int32');
      total += batch.count;
      batch.release();
      const hits = tf.tidy(() => tf.sum(tf.cast(tf.equal(tf.argMax(net.predict(motionEnergy(xs)) as tf.Tensor, 1), labels), 'int32')));
      correct += (await hits.data())[0] ?? 0;
      tf.dispose([xs, labels, hits]);
    }
    net.dispose();
    optimizer.dispose();
    return { heldAccuracy: correct / total, readbacksWhileTraining: readbacks, steps, seconds, roads };
  } finally {
    tf.removeBackend('webgpu');
    await tf.setBackend('cpu');
    gpu.close();
  }
}

/** The bar: ≥ 80% held-out on the four directions (chance 25%), with no GPU→CPU readback while training. */
export const VIDEO_ACCURACY_BAR = 0.8;

export async function videoClassifierLearnsMotion(
  train: LoaderSource,
  held: LoaderSource,
  epochs: number,
  backend: VideoBackend,
): Promise<VideoTrainingResult> {
  const r = await videoClassifierTrains(train, held, epochs, backend);
  check(r.readbacksWhileTraining === 0, `${r.readbacksWhileTraining} readbacks while training`);
  check(r.heldAccuracy >= VIDEO_ACCURACY_BAR, `held-out accuracy ${(100 * r.heldAccuracy).toFixed(1)}% < ${100 * VIDEO_ACCURACY_BAR}%`);
  return r;
}

/** The generated dataset's files as URL items: `<root>/<class>/<index>.mp4`, labelled by the generator. */
export function movingShapesUrls(root: string, seed: number, count: number): { url: string; label: number; key: string }[] {
  return Array.from({ length: count }, (_, index) => {
    const label = motionLabelFor(seed, index);
    return { url: `${root}/${MOTION_NAMES[label]}/${index}.mp4`, label, key: `${MOTION_NAMES[label]}/${index}` };
  });
}
