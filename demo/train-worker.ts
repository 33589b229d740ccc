// The demo's training runs here, in a dedicated worker, so the page's main thread only draws: the
// loader's event loop, the WebGPU calls and the decode pool's pthreads never compete with frames.
// After a finished run the worker keeps the trained model (trained-model.ts) for the page to try.
import { acquireGpu, type GpuContext } from '../src/gpu/index.ts';
// The Parquet reader as `tandem train --hf` opens it (the session takes row groups as a stream).
import { loadParquetShards, type ParquetShards } from '../src/loader/internal.ts';
import {
  blobSource,
  decodeTrainingCheckpoint,
  parquetData,
  runTraining,
  splitHeldOut,
  syntheticData,
  type LabelledData,
  type TrainingEvent,
} from '../src/train/index.ts';
import { loadTimmWeights, saveTimmWeights, type ViTConfig } from '../src/vit/index.ts';
import type { FromWorker, ToWorker } from './protocol.ts';
import { forgetRun, saveRun, savedCheckpoint } from './saved-run.ts';
import { failure, TrainedModel } from './trained-model.ts';

const post = (m: FromWorker) => {
  if (m.type === 'preview') self.postMessage(m, { transfer: [m.rgba.buffer] });
  else if (m.type === 'checkpoint' || m.type === 'weights') self.postMessage(m, { transfer: [m.bytes.buffer] });
  else self.postMessage(m);
};
let abort: AbortController | undefined;
/** The trained model, from the end of a finished run until the page sends 'stop'. */
let model: Promise<TrainedModel> | undefined;
/** Held-out images whose bytes go to the page for its grid (all of them go as predictions). */
const GRID_IMAGES = 48;

// The model's work (the held-out predictions, each 'classify', the release) runs one call at a
// time: every call writes the same GPU input buffer, and the release must wait for those before it.
let queue: Promise<unknown> = Promise.resolve();
function serially<T>(work: () => Promise<T>): Promise<T> {
  const next = queue.then(work);
  queue = next.catch(() => undefined);
  return next;
}

async function start(m: Extract<ToWorker, { type: 'start' }>): Promise<void> {
  abort = new AbortController();
  const s = m.settings;
  let data: LabelledData;
  let parquet: ParquetShards | undefined;
  if (m.parquet) {
    const where = 'hf' in m.parquet ? `${m.parquet.hf} (${m.parquet.split})` : m.parquet.parquet.join(', ');
    post({ type: 'status', text: `reading the Parquet footers of ${where}…` });
    parquet = await (await loadParquetShards())(m.parquet, 'image', {}, 'the demo');
    data = parquetData(parquet);
    const rows = parquet.rows.reduce((a, b) => a + b, 0);
    post({
      type: 'status',
      text: `${where}: ${rows} rows in ${parquet.shards.length} row groups, columns ${parquet.columns.data} and ${parquet.columns.label ?? '(no label)'}, classes ${parquet.classes.join(', ')}; streamed, none held out`,
    });
  } else if (m.picked) {
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
  const saving = !m.picked && !m.parquet && !m.weights;
  const resumeFrom = m.resume ? await savedCheckpoint() : undefined;
  if (m.resume && !resumeFrom) throw new Error('no saved run to continue');
  if (resumeFrom) post({ type: 'status', text: `resumed at step ${decodeTrainingCheckpoint(resumeFrom).state.step}` });
  const steps = Math.ceil((data.train.length * s.epochs) / s.batchSize);
  // The worker acquires the GPU (a session leaves a device it was given open), so the trained
  // model can stay on it once the session has released its own buffers and decode pool.
  const gpu = await acquireGpu();
  let trained: { config: ViTConfig; params: Float32Array<ArrayBuffer> } | undefined;
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
      gpu,
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
        const params = new Float32Array(await trainer.readParams());
        trained = { config: trainer.config, params };
        post({ type: 'checkpoint', bytes: new Uint8Array(await trainer.saveCheckpoint()) });
        post({ type: 'weights', bytes: saveTimmWeights(trainer.config, params) });
      },
    },
    (e: TrainingEvent) => post(e),
  )
    .catch((e: unknown) => {
      gpu.close(); // the session failed: nothing is kept
      throw e;
    })
    .finally(() => parquet?.close());
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
  // A stopped run ends here (the page ends the worker); a finished one keeps its model to try.
  if (report.cancelled || !trained) return gpu.close();
  await keepModel(gpu, trained, data, s);
}

/** Opens the trained model and sends the page its predictions on the held-out images. */
async function keepModel(
  gpu: GpuContext,
  trained: { config: ViTConfig; params: Float32Array<ArrayBuffer> },
  data: LabelledData,
  s: { threads: number; batchSize: number },
): Promise<void> {
  const opened = TrainedModel.open(gpu, trained.config, trained.params, { threads: s.threads, batchSize: s.batchSize });
  model = opened;
  await serially(async () => {
    const trainedModel = await opened;
    const { predictions, failures } = data.held.length > 0 ? await trainedModel.predict(data.held) : { predictions: [], failures: [] };
    const shown = new Set(predictions.slice(0, GRID_IMAGES).map((p) => p.key));
    const images = await Promise.all(
      data.held.filter((h) => shown.has(h.key)).map(async (h) => ({ key: h.key, file: new Blob([new Uint8Array(await h.read())]) })),
    );
    post({ type: 'held-out', classes: [...data.classes], predictions, failures, images });
  });
}

function classify(m: Extract<ToWorker, { type: 'classify' }>): void {
  const held = model;
  const answer = held
    ? serially(async () => (await held).classify(m.name, new Uint8Array(await m.file.arrayBuffer())))
    : Promise.reject(new Error('there is no trained model (train one first)'));
  // Every request is answered, success or not, so the page never waits on a lost one.
  answer.then(
    (probabilities) => post({ type: 'classified', id: m.id, probabilities }),
    (e: unknown) => post({ type: 'classified', id: m.id, failure: failure(m.name, e) }),
  );
}

/** Frees the trained model (GPU device, decode pool) after the calls queued before, then ends the worker. */
function release(held: Promise<TrainedModel>): void {
  model = undefined;
  serially(async () => (await held.catch(() => undefined))?.close())
    .then(
      () => post({ type: 'released' }),
      (e: unknown) => post({ type: 'error', message: e instanceof Error ? e.message : String(e) }),
    )
    .finally(() => self.close());
}

self.onmessage = (event: MessageEvent<ToWorker>) => {
  const m = event.data;
  if (m.type === 'stop') {
    if (model) release(model);
    else abort?.abort(new DOMException('stopped from the page', 'AbortError'));
  } else if (m.type === 'classify') classify(m);
  else start(m).catch((e: unknown) => post({ type: 'error', message: e instanceof Error ? e.message : String(e) }));
};
