// The demo's training runs here, in a dedicated worker, so the page's main thread only draws: the
// loader's event loop, the WebGPU calls and the decode pool's pthreads never compete with frames.
import {
  blobSource,
  decodeTrainingCheckpoint,
  runTraining,
  splitHeldOut,
  syntheticData,
  type LabelledData,
  type TrainingEvent,
} from '../src/train/index.ts';
import { loadTimmWeights, saveTimmWeights } from '../src/vit/index.ts';
import type { FromWorker, ToWorker } from './protocol.ts';
import { forgetRun, saveRun, savedCheckpoint } from './saved-run.ts';

const post = (m: FromWorker) => {
  if (m.type === 'preview') self.postMessage(m, { transfer: [m.rgba.buffer] });
  else if (m.type === 'checkpoint' || m.type === 'weights') self.postMessage(m, { transfer: [m.bytes.buffer] });
  else self.postMessage(m);
};
let abort: AbortController | undefined;

async function start(m: Extract<ToWorker, { type: 'start' }>): Promise<void> {
  abort = new AbortController();
  const s = m.settings;
  let data: LabelledData;
  if (m.picked) {
    data = splitHeldOut(
      m.picked.images.map((p) => blobSource(p.key, p.label, p.file)),
      m.picked.classes,
      5,
    );
    post({
      type: 'status',
      text: `folder: ${data.train.length} training / ${data.held.length} held-out images, classes ${m.picked.classes.join(', ')}`,
    });
  } else {
    post({ type: 'status', text: `generating ${s.images} labelled JPEGs…` });
    data = await syntheticData({
      count: s.images,
      onProgress: (done, total) => done % 64 === 0 && post({ type: 'status', text: `generated ${done}/${total} JPEGs` }),
    });
    post({ type: 'status', text: `built-in dataset: ${data.train.length} training / ${data.held.length} held-out images` });
  }
  let start = {};
  if (m.weights) {
    const loaded = loadTimmWeights(new Uint8Array(await m.weights.arrayBuffer()), { classes: data.classes.length, seed: 1 });
    const c = loaded.config;
    post({
      type: 'status',
      text: `weights: ViT ${c.imageSize}px, width ${c.width}, depth ${c.depth}; ${loaded.headReplaced ? `new head for ${c.classes} classes` : 'its own head'}`,
    });
    start = { model: c, initialParams: loaded.params };
  }
  // Runs on the built-in dataset are saved in OPFS as they go, so a reload can continue them.
  const saving = !m.picked && !m.weights;
  const resumeFrom = m.resume ? await savedCheckpoint() : undefined;
  if (m.resume && !resumeFrom) throw new Error('no saved run to continue');
  if (resumeFrom) post({ type: 'status', text: `resumed at step ${decodeTrainingCheckpoint(resumeFrom).state.step}` });
  const steps = Math.ceil((data.train.length * s.epochs) / s.batchSize);
  const report = await runTraining(
    data,
    {
      epochs: s.epochs,
      batchSize: s.batchSize,
      threads: s.threads,
      seed: 1,
      lr: 2e-3,
      augment: s.augment,
      reportEvery: 2,
      statsIntervalMs: 500,
      previewEvery: 4,
      previewImages: 16,
      signal: abort.signal,
      ...start,
      ...(resumeFrom ? { resumeFrom } : {}),
      ...(saving
        ? {
            checkpointEvery: 4,
            onCheckpoint: async (bytes: Uint8Array<ArrayBuffer>, step: number) => {
              await saveRun(bytes, { settings: s, step, steps });
              post({ type: 'saved', step });
            },
          }
        : {}),
      onTrained: async (trainer) => {
        post({ type: 'checkpoint', bytes: new Uint8Array(await trainer.saveCheckpoint()) });
        post({ type: 'weights', bytes: saveTimmWeights(trainer.config, await trainer.readParams()) });
      },
    },
    (e: TrainingEvent) => post(e),
  );
  if (saving && !report.cancelled) await forgetRun(); // finished: nothing to continue
  post({
    type: 'done',
    steps: report.steps,
    seconds: report.seconds,
    cancelled: report.cancelled,
    failures: report.failures,
    bottleneck: report.bottleneck,
    waitedForData: report.waitedForDataSeconds / Math.max(report.seconds, 1e-9),
  });
}

self.onmessage = (event: MessageEvent<ToWorker>) => {
  const m = event.data;
  if (m.type === 'stop') abort?.abort(new DOMException('stopped from the page', 'AbortError'));
  else start(m).catch((e: unknown) => post({ type: 'error', message: e instanceof Error ? e.message : String(e) }));
};
