// The video demo: a folder of the user's videos (class subfolders = labels) → videoLoader() clips
// decoded by WebCodecs (or the wasm threads) into WebGPU buffers → a small conv net in TensorFlow.js
// on the same device (video-model.ts). Training runs on the page's thread: every step awaits the
// GPU, so the page keeps drawing (the spinner and the frame-gap meter show it). The loss is read
// back only every 10th step; state for tests and curious readers is on `window.tandemVideoDemo`.
import * as tf from '@tensorflow/tfjs-core';
import { WebGPUBackend } from '@tensorflow/tfjs-backend-webgpu';
import type { LayersModel } from '@tensorflow/tfjs-layers';
import { acquireGpu } from '../src/gpu/index.ts';
import { listDroppedItems, listFileList, type DataTransferItemLike, type PickedFolder } from '../src/sources/index.ts';
import { useDeviceForTfjs } from '../src/tfjs/index.ts';
import {
  VIDEO_EXTENSIONS,
  videoLoader,
  type VideoBackend,
  type VideoDeviceBatch,
  type VideoLoader,
  type VideoRoads,
} from '../src/video/index.ts';
import { FrameMeter, LineChart } from './charts.ts';
import { clipClassifier, framesAndDifferences, splitByVideo } from './video-model.ts';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const HELD_SHARE = 0.2,
  SEED = 7,
  LOSS_EVERY = 10;

const state = {
  state: 'idle' as 'idle' | 'running' | 'done' | 'error',
  steps: 0,
  /** Held-out accuracy after each epoch. */
  accuracy: [] as number[],
  /** The losses read back: every LOSS_EVERY-th step. */
  losses: [] as { step: number; loss: number }[],
  roads: { webcodecs: 0, wasm: 0 } as VideoRoads,
  classes: [] as string[],
  videos: { train: 0, held: 0 },
  failures: 0,
  summary: '',
  error: undefined as string | undefined,
  frameGaps: { max: 0, p95: 0 },
  frames: 0,
};
(globalThis as unknown as { tandemVideoDemo: typeof state }).tandemVideoDemo = state;

const lossChart = new LineChart($('loss'), 'training loss (every 10th step)');
const accuracyChart = new LineChart($('accuracy'), 'held-out accuracy per epoch', [0, 1]);

// The query sets the options' starting values (?frames=4&stride=3&size=32&epochs=2&backend=webcodecs), for links and tests.
const params = new URLSearchParams(location.search);
for (const id of ['frames', 'stride', 'size', 'epochs', 'batch', 'backend']) {
  const v = params.get(id);
  if (v !== null) $<HTMLInputElement>(id).value = v;
}

function backend(): VideoBackend {
  const v = $<HTMLSelectElement>('backend').value;
  return v === 'webcodecs' || v === 'wasm' ? v : 'auto';
}

function setting(id: string): number {
  const input = $<HTMLInputElement>(id);
  const v = Math.round(Number(input.value));
  return Math.min(Number(input.max), Math.max(Number(input.min), Number.isFinite(v) ? v : Number(input.defaultValue)));
}

function setStatus(text: string): void {
  $('status').textContent = text;
}

function showRoads(roads: VideoRoads): void {
  state.roads = roads;
  $('roads').textContent = `clips decoded: ${roads.webcodecs} through WebCodecs, ${roads.wasm} on the wasm threads`;
}

async function train(folder: PickedFolder): Promise<void> {
  const o = {
    frames: setting('frames'),
    stride: setting('stride'),
    size: setting('size'),
    epochs: setting('epochs'),
    batch: setting('batch'),
  };
  const { train: trainFiles, held: heldFiles } = splitByVideo(folder.files, HELD_SHARE, SEED);
  if (trainFiles.length === 0) throw new Error('no videos inside class subfolders (expected <folder>/<class>/<video>.mp4)');
  if (folder.classes.length < 2) throw new Error(`one class found (${folder.classes.join('')}): a classifier needs two or more subfolders`);
  state.classes = folder.classes;
  state.videos = { train: trainFiles.length, held: heldFiles.length };
  $('classes').textContent =
    `classes: ${folder.classes.join(', ')} · ${trainFiles.length} videos to train on, ${heldFiles.length} held out`;
  const items = (files: typeof trainFiles) => files.map((f) => ({ file: f.file, label: f.label, key: f.path }));

  const gpu = await acquireGpu();
  await useDeviceForTfjs(tf, WebGPUBackend, gpu);
  const common = {
    clip: { frames: o.frames, stride: o.stride },
    size: o.size,
    batchSize: o.batch,
    to: gpu,
    backend: backend(),
    mean: [0.5, 0.5, 0.5],
    std: [0.25, 0.25, 0.25],
  } as const;
  // Each `for await` over a loader is one epoch (epochs: 1); the next goes on with the next epoch's draws.
  const trainData = videoLoader(items(trainFiles), {
    ...common,
    sampler: 'random',
    clipsPerVideo: 1,
    shuffle: true,
    seed: SEED,
    epochs: 1,
  });
  const heldData = videoLoader(items(heldFiles), { ...common, sampler: 'uniform', clipsPerVideo: 1 });
  const classes = folder.classes.length;
  const net = clipClassifier(o.frames, o.size, classes, SEED);
  const optimizer = tf.train.adam(3e-3);
  const shape = (b: VideoDeviceBatch) => [b.count, o.frames, o.size, o.size, 3];
  try {
    for (let epoch = 1; epoch <= o.epochs; epoch++) {
      setStatus(`epoch ${epoch} of ${o.epochs}: training…`);
      for await (const batch of trainData) {
        // tf.js copies the batch's buffer on the GPU before returning: the batch goes back at once.
        const xs = tf.tensor({ buffer: batch.clips }, shape(batch), 'float32');
        const ys = tf.oneHot(tf.tensor1d(batch.labels, 'int32'), classes);
        batch.release();
        const read = state.steps % LOSS_EVERY === 0;
        const loss = optimizer.minimize(
          () => tf.losses.softmaxCrossEntropy(ys, net.apply(framesAndDifferences(tf, xs), { training: true }) as tf.Tensor) as tf.Scalar,
          read,
        );
        tf.dispose([xs, ys]);
        state.steps++;
        if (loss) {
          const value = (await trainData.waitFor(loss.data()))[0] ?? Number.NaN;
          loss.dispose();
          state.losses.push({ step: state.steps, loss: value });
          lossChart.add('loss', state.steps, value);
        } else {
          // Keeps the GPU within a step of the loop (a fence, no readback) and lets the page draw.
          await trainData.waitFor(gpu.device.queue.onSubmittedWorkDone());
        }
        showRoads(add(trainData.roads(), heldData.roads()));
      }
      setStatus(`epoch ${epoch} of ${o.epochs}: held-out accuracy…`);
      const accuracy = heldFiles.length ? await evaluate(heldData, net, shape) : Number.NaN;
      state.accuracy.push(accuracy);
      accuracyChart.add('held-out', epoch, accuracy);
      showRoads(add(trainData.roads(), heldData.roads()));
      state.summary = trainData.summary();
      $('summary').textContent = state.summary;
    }
    state.failures = trainData.failures().length + heldData.failures().length;
    const last = state.accuracy.at(-1) ?? Number.NaN;
    const failed = [...trainData.failures(), ...heldData.failures()].map((f) => `${f.key}: ${f.error}`);
    setStatus(
      `done: ${state.steps} steps, held-out accuracy ${Number.isNaN(last) ? '— (no videos held out)' : `${(100 * last).toFixed(1)}%`}` +
        (failed.length ? `; ${failed.length} clips failed (${failed.slice(0, 3).join('; ')})` : ''),
    );
  } finally {
    await trainData.close();
    await heldData.close();
    net.dispose();
    optimizer.dispose();
    tf.removeBackend('webgpu');
    gpu.close();
  }
}

/** The share of held-out videos (one centred clip each) the model gets right; reads back one count per batch. */
async function evaluate(data: VideoLoader<VideoDeviceBatch>, net: LayersModel, shape: (b: VideoDeviceBatch) => number[]): Promise<number> {
  let correct = 0,
    total = 0;
  for await (const batch of data) {
    const xs = tf.tensor({ buffer: batch.clips }, shape(batch), 'float32');
    const labels = tf.tensor1d(batch.labels, 'int32');
    total += batch.count;
    batch.release();
    const hits = tf.tidy(() =>
      tf.sum(tf.cast(tf.equal(tf.argMax(net.predict(framesAndDifferences(tf, xs)) as tf.Tensor, 1), labels), 'int32')),
    );
    correct += (await hits.data())[0] ?? 0;
    tf.dispose([xs, labels, hits]);
  }
  return total ? correct / total : Number.NaN;
}

const add = (a: VideoRoads, b: VideoRoads): VideoRoads => ({ webcodecs: a.webcodecs + b.webcodecs, wasm: a.wasm + b.wasm });

function start(folder: Promise<PickedFolder> | PickedFolder): void {
  if (state.state === 'running') return;
  Object.assign(state, { state: 'running', steps: 0, accuracy: [], losses: [], error: undefined, failures: 0, summary: '' });
  lossChart.clear();
  accuracyChart.clear();
  Promise.resolve(folder)
    .then(train)
    .then(
      () => {
        state.state = 'done';
      },
      (e: unknown) => {
        state.state = 'error';
        state.error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
        setStatus(`error: ${state.error}`);
      },
    );
}

$('pick').onclick = () => $<HTMLInputElement>('folder').click();
$<HTMLInputElement>('folder').onchange = (ev) => {
  const files = (ev.target as HTMLInputElement).files;
  if (files?.length) start(listFileList(files, VIDEO_EXTENSIONS));
};
document.body.ondragover = (ev) => ev.preventDefault();
document.body.ondrop = (ev) => {
  ev.preventDefault();
  const items = ev.dataTransfer?.items;
  // The entries must be taken inside the handler; DOM's entry types are the structural *Like ones.
  if (items?.length) start(listDroppedItems(items as unknown as ArrayLike<DataTransferItemLike>, VIDEO_EXTENSIONS));
};

new FrameMeter().start((m) => {
  state.frames = m.frames;
  if (m.frames % 30 !== 0) return;
  state.frameGaps = m.gaps();
  $('frames-meter').textContent =
    `frame gaps over the last ~5 s: max ${state.frameGaps.max.toFixed(0)} ms, p95 ${state.frameGaps.p95.toFixed(0)} ms`;
});
