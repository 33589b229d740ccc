// A training session, the same in browsers, Deno and Node: labelled byte sources → the loader
// (read, wasm decode into batch buffers, upload into a GPU ring) → WGSL augmentation or
// normalisation → ViT steps in WGSL, with held-out evaluation after every epoch. It reports
// through events (steps, stage occupancy, epochs, batch previews) and returns a report.
import { DecodePool } from '../decode/index.ts';
import { acquireGpu, AugmentKernel, NormalizeKernel, type GpuBatch, type GpuContext } from '../gpu/index.ts';
import { bottleneck } from '../pipeline/index.ts';
import { hardwareConcurrency } from '../runtime/index.ts';
import { shuffledEpochs } from '../sources/index.ts';
import { presets, ViTTrainer, type ViTConfig } from '../vit/index.ts';
import { evaluateHeldOut } from './evaluate.ts';
import type { EpochRecord, StepEvent, TrainingEvent, TrainReport } from './events.ts';
import { createLoader } from './loader.ts';
import { OccupancyMeter } from './occupancy.ts';
import { PreviewReader } from './preview.ts';
import type { LabelledData } from './sources.ts';

export interface TrainingOptions {
  epochs: number;
  batchSize: number;
  /** Decode threads (pool size). */
  threads: number;
  seed: number;
  lr: number;
  /** Random resized crop, flip and jitter on the GPU; off, batches are only normalised. */
  augment: boolean;
  /** The model (default: the tiny preset with as many classes as the data has). */
  model?: ViTConfig;
  /** Read loss and accuracy back every this many steps (default 4). */
  reportEvery?: number;
  /** Emit per-stage statistics this often (default 1000 ms). */
  statsIntervalMs?: number;
  /** Read a few images of the current batch back every this many steps (0 or absent: never). */
  previewEvery?: number;
  previewImages?: number;
  signal?: AbortSignal;
  /** Use this device (left open) instead of acquiring one (closed at the end). */
  gpu?: GpuContext;
  /** Called with the trainer once training ends, before it is destroyed (e.g. to save a checkpoint). */
  onTrained?: (trainer: ViTTrainer) => Promise<void>;
}

/**
 * The one set of training defaults (the CLI's `tandem train` and the demo page start from it).
 * Measured on 2 cores with lavapipe (docs/vit.md): 6 epochs of 8192 generated images in batches
 * of 32 at lr 2.5e-3 reach 71.7% held-out with seeds 1 and 2 (68.1% with seed 3), where batches
 * of 64 landed between 66.2% and 73.0% by seed. Decode threads: the machine's cores, at most 8.
 */
export const defaultTrainingOptions: Readonly<TrainingOptions> = {
  epochs: 6,
  batchSize: 32,
  threads: Math.max(1, Math.min(8, hardwareConcurrency())),
  seed: 1,
  lr: 2.5e-3,
  augment: false,
};

export async function runTraining(
  data: LabelledData,
  o: TrainingOptions,
  emit: (e: TrainingEvent) => void = () => {},
): Promise<TrainReport> {
  const trainCount = data.stream?.count ?? data.train.length;
  if (trainCount === 0) throw new Error('tandem train: no training images');
  const model: ViTConfig = o.model ?? { ...presets.tiny, classes: data.classes.length };
  const B = o.batchSize,
    size = model.imageSize;
  const steps = Math.ceil((trainCount * o.epochs) / B); // batches run across epoch boundaries
  const gpu = o.gpu ?? (await acquireGpu());
  const pool = await DecodePool.create({ threads: o.threads }).catch((e: unknown) => {
    if (!o.gpu) gpu.close();
    throw e;
  });
  const report: TrainReport = {
    adapter: gpu.runtime,
    decodeMode: pool.stats().mode,
    model,
    images: { train: trainCount, validation: data.held.length, classes: [...data.classes] },
    epochs: [],
    steps: 0,
    failures: 0,
    loaderStats: undefined,
    bottleneck: undefined,
    waitedForDataSeconds: 0,
    waitedForGpuSeconds: 0,
    seconds: 0,
    timeline: { steps: [], stats: [] },
    cancelled: false,
    shutdown: { batchBuffersHeld: 0, gpuSlotsHeld: 0, workersAlive: 0 },
  };
  emit({
    type: 'start',
    adapter: report.adapter,
    decodeMode: report.decodeMode,
    model,
    train: trainCount,
    validation: data.held.length,
    classes: data.classes,
    epochs: o.epochs,
    steps,
    batchSize: B,
  });
  const device = gpu.device;
  const trainer = await ViTTrainer.create(device, {
    config: model,
    batchSize: B,
    seed: o.seed,
    train: { lr: o.lr, warmupSteps: Math.min(20, Math.floor(steps / 10)), totalSteps: steps, weightDecay: 0.05, clipNorm: 1 },
  });
  const shape = { images: B, srcHeight: size, srcWidth: size, channels: 3, outHeight: size, outWidth: size };
  const augment = await AugmentKernel.create(device, shape, { scale: [0.6, 1], brightness: 0.1, contrast: 0.1 });
  const normalize = await NormalizeKernel.create(device, { images: B, height: size, width: size, channels: 3 });
  const images = device.createBuffer({ size: augment.outputBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const labels = device.createBuffer({ size: B * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  const preview = o.previewEvery ? new PreviewReader(device, { batchSize: B, imageSize: size, count: o.previewImages ?? 16 }) : undefined;
  const padded = new Int32Array(B);
  const ids = new Uint32Array(B);
  const writeLabels = (batch: GpuBatch) => {
    padded.fill(-1); // rows past `count` are padding: the loss and accuracy skip label −1
    padded.set(batch.labels);
    device.queue.writeBuffer(labels, 0, padded);
  };
  const start = performance.now();
  const elapsed = () => (performance.now() - start) / 1000;
  const source = data.stream
    ? untilAbortedAsync(data.stream.open(o.seed, o.epochs), o.signal)
    : untilAborted(shuffledEpochs(data.train, o.seed, o.epochs), o.signal);
  const loader = await createLoader({ source, device, pool, threads: o.threads, batchSize: B, imageSize: size });
  loader.pipeline.consumer.name = 'training loop'; // how stats and the bottleneck name this loop
  const meter = new OccupancyMeter();
  const stopStats = loader.pipeline.onStats((stats) => {
    const event = {
      type: 'stats' as const,
      seconds: elapsed(),
      stages: meter.sample(stats),
      waitedForData: report.waitedForDataSeconds / Math.max(elapsed(), 1e-9),
      pool: pool.stats(),
    };
    report.timeline.stats.push(event);
    emit(event);
  }, o.statsIntervalMs ?? 1000);
  const fences: Promise<undefined>[] = [];
  const reportEvery = o.reportEvery ?? 4;
  let pendingLoss: Promise<void> | undefined;
  let epochLoss = { loss: 0, correct: 0, samples: 0 };
  let step = 0,
    seen = 0,
    epochStart = performance.now(),
    epochImages = 0;
  let window = { t: performance.now(), images: 0, waited: 0 };
  const secondsLeft = () => (elapsed() / Math.max(step, 1)) * (steps - step);
  // Loss is read back without awaiting it in the loop: the GPU keeps the next steps queued.
  const readLoss = () => {
    const now = performance.now();
    const w = window;
    window = { t: now, images: 0, waited: 0 };
    const at = step,
      epoch = seen / trainCount;
    pendingLoss = trainer
      .readLoss()
      .then((r) => {
        if (r.samples)
          epochLoss = {
            loss: epochLoss.loss + r.loss * r.samples,
            correct: epochLoss.correct + r.accuracy * r.samples,
            samples: epochLoss.samples + r.samples,
          };
        const seconds = Math.max((now - w.t) / 1000, 1e-9);
        const event: StepEvent = {
          type: 'step',
          step: at,
          steps,
          epoch,
          loss: r.loss,
          accuracy: r.accuracy,
          imagesPerSecond: w.images / seconds,
          waitedForData: w.waited / seconds,
          seconds: elapsed(),
          secondsLeft: secondsLeft(),
        };
        report.timeline.steps.push(event);
        emit(event);
      })
      .finally(() => (pendingLoss = undefined));
  };
  try {
    const batches = loader.pipeline[Symbol.asyncIterator]();
    for (;;) {
      const waitStart = performance.now();
      const next = await batches.next();
      const waited = (performance.now() - waitStart) / 1000;
      report.waitedForDataSeconds += waited;
      window.waited += waited;
      if (next.done) break;
      const batch = next.value;
      if (o.signal?.aborted) {
        batch.release(); // cancelled: the source has stopped; drain what is in flight, untrained
        continue;
      }
      writeLabels(batch);
      for (let i = 0; i < B; i++) ids[i] = step * B + i;
      const encoder = device.createCommandEncoder();
      if (o.augment) augment.encode(encoder, batch.buffer, images, o.seed, ids);
      else normalize.encode(encoder, batch.buffer, images);
      trainer.step(encoder, images, labels);
      const previewNow = preview !== undefined && !preview.busy && step % o.previewEvery! === 0;
      if (previewNow) preview.encode(encoder, images);
      device.queue.submit([encoder.finish()]);
      if (previewNow) preview.read(step, batch.labels, emit);
      batch.release();
      step++;
      seen += batch.count;
      epochImages += batch.count;
      window.images += batch.count;
      // Keep at most two steps queued: memory stays bounded and the GPU never runs dry.
      fences.push(device.queue.onSubmittedWorkDone());
      if (fences.length > 2) {
        const fenceStart = performance.now();
        await loader.pipeline.consumer.waitFor(fences.shift()!, 'GPU'); // counted as waiting for the GPU, not working
        report.waitedForGpuSeconds += (performance.now() - fenceStart) / 1000;
      }
      const epochEnds = seen >= (report.epochs.length + 1) * trainCount || step === steps;
      if (epochEnds) {
        await pendingLoss;
        readLoss();
        await pendingLoss;
      } else if (step % reportEvery === 0 && pendingLoss === undefined) readLoss();
      if (epochEnds) {
        const seconds = (performance.now() - epochStart) / 1000;
        const v = await evaluateHeldOut({
          trainer,
          pool,
          device,
          normalize,
          held: data.held,
          threads: o.threads,
          batchSize: B,
          imageSize: size,
          images,
          labels,
          writeLabels,
        });
        const e = epochLoss.samples ? epochLoss : { loss: NaN, correct: NaN, samples: 1 };
        const record: EpochRecord = {
          epoch: report.epochs.length + 1,
          trainLoss: e.loss / e.samples,
          trainAccuracy: e.correct / e.samples,
          valAccuracy: v.accuracy,
          valLoss: v.loss,
          imagesPerSecond: epochImages / seconds,
          seconds,
          endedAt: elapsed(),
        };
        report.epochs.push(record);
        emit({ type: 'epoch', ...record, epochs: o.epochs, step, steps, secondsLeft: secondsLeft() });
        epochLoss = { loss: 0, correct: 0, samples: 0 };
        epochStart = performance.now();
        epochImages = 0;
      }
    }
    report.cancelled = step < steps;
    stopStats();
    const last = {
      type: 'stats' as const,
      seconds: elapsed(),
      stages: meter.sample(loader.pipeline.stats()),
      waitedForData: report.waitedForDataSeconds / Math.max(elapsed(), 1e-9),
      pool: pool.stats(),
    };
    report.timeline.stats.push(last); // short runs end before the first interval: keep one sample
    emit(last);
    await o.onTrained?.(trainer);
  } finally {
    stopStats();
    await pendingLoss?.catch(() => undefined);
    await Promise.allSettled(fences);
    report.loaderStats = loader.pipeline.stats();
    report.failures = loader.pipeline.failureCount();
    await loader.pipeline.stop();
    const held = loader.held();
    await loader.close();
    await preview?.close();
    await pool.close();
    report.shutdown = { batchBuffersHeld: held.batchBuffers, gpuSlotsHeld: held.gpuSlots, workersAlive: pool.stats().liveWorkers };
    augment.destroy();
    normalize.destroy();
    trainer.destroy();
    images.destroy();
    labels.destroy();
    if (!o.gpu) gpu.close();
  }
  report.steps = step;
  report.seconds = elapsed();
  report.bottleneck = bottleneck(report.loaderStats)?.name;
  return report;
}

/**
 * Ends the source when the signal aborts, so the pipeline finishes on its own and the loop drains
 * the batches in flight. Aborting the pipeline instead would leave batches in its queues holding
 * batch buffers and upload slots that blocked stage tasks wait for, and its stop() would hang.
 */
function* untilAborted<T>(items: Iterable<T>, signal: AbortSignal | undefined): Generator<T> {
  for (const item of items) {
    if (signal?.aborted) return;
    yield item;
  }
}

async function* untilAbortedAsync<T>(items: AsyncIterable<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  for await (const item of items) {
    if (signal?.aborted) return;
    yield item;
  }
}
