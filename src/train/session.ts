// A training session, the same in browsers, Deno and Node: labelled byte sources → the loader
// (read, wasm decode into batch buffers, upload into a GPU ring) → WGSL augmentation or
// normalisation → ViT steps in WGSL, with held-out evaluation after every epoch. It reports
// through events (steps, stage occupancy, epochs, batch previews) and returns a report.
import { TrainingError } from './errors.ts';
import { OptionError } from '../errors/index.ts';
import { bottleneck, type PipelineStats } from '../pipeline/index.ts';
import { shuffledEpochs } from '../sources/index.ts';
import { dims, presets, type ViTConfig } from '../vit/index.ts';
import {
  CheckpointError,
  checkSameRun,
  decodeTrainingCheckpoint,
  encodeTrainingCheckpoint,
  keysHash,
  type RunIdentity,
} from './checkpoint.ts';
import { evaluateHeldOut } from './evaluate.ts';
import type { StatsEvent, TrainingEvent, TrainReport } from './events.ts';
import { loader, type Loader } from '../loader/index.ts';
import type { GpuBatch } from '../gpu/index.ts';
import { OccupancyMeter } from './occupancy.ts';
import { trainingSettingDefaults, type TrainingOptions } from './options.ts';
import { TrainingProgress } from './progress.ts';
import { TrainingResources } from './resources.ts';
import type { LabelledData } from './sources.ts';

export async function runTraining(
  data: LabelledData,
  o: TrainingOptions,
  emit: (e: TrainingEvent) => void = () => {},
): Promise<TrainReport> {
  const trainCount = data.stream?.count ?? data.train.length;
  if (trainCount === 0) throw new TrainingError('no-data', 'tandem train: no training images');
  // Checked before anything is allocated: a bad option costs no threads and no GPU.
  for (const name of ['epochs', 'batchSize', 'threads'] as const) {
    const value = o[name];
    if (!Number.isInteger(value) || value < 1) throw new OptionError('runTraining options', name, value, 'a positive integer');
  }
  if (o.initialParams && !o.model)
    throw new OptionError('runTraining options', 'initialParams', '(parameters)', 'given with the model they belong to (model)');
  const model: ViTConfig = o.model ?? { ...presets.tiny, classes: data.classes.length };
  dims(model);
  if (model.classes < data.classes.length)
    throw new RangeError(`tandem train: the model has ${model.classes} classes, the data ${data.classes.length}`);
  const B = o.batchSize;
  const steps = Math.ceil((trainCount * o.epochs) / B); // batches run across epoch boundaries
  const identity: RunIdentity = {
    model,
    seed: o.seed,
    batchSize: B,
    epochs: o.epochs,
    augment: o.augment,
    lr: o.lr,
    settings: {
      weightDecay: o.weightDecay ?? trainingSettingDefaults.weightDecay,
      clipNorm: o.clipNorm ?? trainingSettingDefaults.clipNorm,
      warmupSteps: o.warmupSteps ?? trainingSettingDefaults.warmupSteps(steps),
      augmentation: o.augmentation ?? trainingSettingDefaults.augmentation,
    },
    trainCount,
    dataKey: data.stream ? (data.stream.dataKey ?? keysHash([])) : keysHash(data.train.map((s) => s.key)),
  };
  const checkpoints = (o.checkpointEvery ?? 0) > 0 && o.onCheckpoint !== undefined;
  const resumed = o.resumeFrom ? decodeTrainingCheckpoint(o.resumeFrom) : undefined;
  if (resumed && data.stream && resumed.state.stream === undefined)
    throw new CheckpointError('mismatch', 'the checkpoint is of a run on listed files; this run streams its data');
  // A stream checks that the position is its own when opened: before the identity, whose per-rank
  // count would otherwise be the difference named when only the world size changed.
  const stream = data.stream?.open(o.seed, o.epochs, resumed?.state.stream);
  if (resumed) checkSameRun(resumed.state, identity);
  // The start event goes out as soon as the GPU and the pool exist, before the kernels compile.
  const res = await TrainingResources.open(o, model, steps, ({ gpu, pool }) =>
    emit({
      type: 'start',
      adapter: gpu.runtime,
      decodeMode: pool.stats().mode,
      model,
      train: trainCount,
      validation: data.held.length,
      classes: data.classes,
      epochs: o.epochs,
      steps,
      batchSize: B,
    }),
  );
  const { device, pool, trainer } = res;
  const report = emptyReport(res, model, data, trainCount);
  const progress = new TrainingProgress(trainer, report, emit, { steps, epochs: o.epochs, trainCount, reportEvery: o.reportEvery ?? 4 });
  if (resumed) {
    trainer.loadCheckpoint(resumed.trainerBytes);
    progress.restore(resumed.state);
  }
  // Items of the session's order done with: where the checkpoint resumed, plus what the loader has
  // done with since (its own position over the stream it reads: the end of the last consumed
  // batch's cell, so failed items at the end of a batch are not tried again on resume).
  const start = resumed?.state.position ?? 0;
  let opened: Loader<GpuBatch> | undefined;
  const position = () => {
    const streamed = opened?.started ? (opened.state().streamed ?? 0) : 0;
    return start + streamed;
  };
  const checkpoint = async () => {
    const state = {
      ...identity,
      step: progress.step,
      seen: progress.seen,
      position: position(),
      ...(stream ? { stream: stream.stateAfter(position() - start) } : {}),
      epochRecords: report.epochs,
    };
    await o.onCheckpoint?.(encodeTrainingCheckpoint(state, await trainer.saveCheckpoint()), progress.step);
  };
  const meter = new OccupancyMeter();
  const statsEvent = (stats: PipelineStats): StatsEvent => ({
    type: 'stats',
    seconds: progress.elapsed(),
    stages: meter.sample(stats),
    waitedForData: report.waitedForDataSeconds / Math.max(progress.elapsed(), 1e-9),
    pool: pool.stats(),
  });
  const fences: Promise<undefined>[] = [];
  // The session keeps its own order and position (the checkpoint's), so the loader reads its
  // sources as a stream; every failed item is reported and none stops the run.
  const source = stream
    ? untilAbortedAsync(stream, o.signal)
    : untilAborted(skipped(shuffledEpochs(data.train, o.seed, o.epochs), start), o.signal);
  let batches: AsyncGenerator<GpuBatch, void, undefined> | undefined;
  let stopStats = () => {};
  try {
    opened = loader(source, {
      to: device,
      normalize: false,
      pool,
      batchSize: B,
      size: model.imageSize,
      readConcurrency: o.loader?.readConcurrency ?? trainingSettingDefaults.loader.readConcurrency,
      failureBudget: {},
      consumer: 'training loop', // how stats and the bottleneck name this loop
    });
    batches = opened[Symbol.asyncIterator]();
    stopStats = opened.onStats((stats) => {
      const event = statsEvent(stats);
      report.timeline.stats.push(event);
      emit(event);
    }, o.statsIntervalMs ?? 1000);
    for (;;) {
      const waitStart = performance.now();
      const next = await batches.next();
      progress.waitedForData((performance.now() - waitStart) / 1000);
      if (next.done) break;
      const batch = next.value;
      if (o.signal?.aborted) {
        batch.release(); // cancelled: the source has stopped; drain what is in flight, untrained
        continue;
      }
      const step = progress.step;
      const encoder = device.createCommandEncoder();
      res.encodeStep(encoder, batch, step, o);
      const preview = res.preview;
      const previewNow = preview !== undefined && o.previewEvery !== undefined && !preview.busy && step % o.previewEvery === 0;
      if (previewNow) preview.encode(encoder, res.images);
      device.queue.submit([encoder.finish()]);
      if (previewNow) preview.read(step, batch.labels, emit);
      const keys = batch.keys; // read before the release
      batch.release();
      progress.stepped(batch.count);
      o.onStepKeys?.(progress.step, keys);
      // Keep at most two steps queued: memory stays bounded and the GPU never runs dry.
      fences.push(device.queue.onSubmittedWorkDone());
      const oldest = fences.length > 2 ? fences.shift() : undefined;
      if (oldest !== undefined) {
        const fenceStart = performance.now();
        await opened.waitFor(oldest, 'GPU'); // counted as waiting for the GPU, not working
        report.waitedForGpuSeconds += (performance.now() - fenceStart) / 1000;
      }
      const epochEnded = progress.epochEnded;
      await progress.afterStep();
      if (epochEnded) {
        const heldOut = await evaluateHeldOut({
          trainer,
          pool,
          device,
          normalize: res.normalize,
          held: data.held,
          threads: o.threads,
          batchSize: B,
          imageSize: model.imageSize,
          images: res.images,
          labels: res.labels,
          writeLabels: (b) => res.writeLabels(b),
          ...(o.signal ? { signal: o.signal } : {}),
        });
        progress.endEpoch(heldOut);
      }
      if (checkpoints && !o.signal?.aborted && (progress.step % o.checkpointEvery! === 0 || progress.step === steps)) await checkpoint();
    }
    report.cancelled = progress.step < steps;
    stopStats();
    const stats = opened.stats();
    if (stats) {
      const last = statsEvent(stats);
      report.timeline.stats.push(last); // short runs end before the first interval: keep one sample
      emit(last);
    }
    await o.onTrained?.(trainer);
  } finally {
    stopStats();
    await progress.settle();
    await Promise.allSettled(fences);
    await batches?.return(undefined); // ends the pass (a no-op after the last batch)
    report.loaderStats = opened?.stats();
    report.failures = opened?.failureCount() ?? 0;
    const held = opened?.held() ?? { batchBuffers: 0, gpuSlots: 0 };
    await opened?.close();
    await res.close();
    report.shutdown = { batchBuffersHeld: held.batchBuffers, gpuSlotsHeld: held.gpuSlots, workersAlive: pool.stats().liveWorkers };
  }
  report.steps = progress.step;
  report.seconds = progress.elapsed();
  report.bottleneck = report.loaderStats && bottleneck(report.loaderStats)?.name;
  return report;
}

function emptyReport(res: TrainingResources, model: ViTConfig, data: LabelledData, trainCount: number): TrainReport {
  return {
    adapter: res.gpu.runtime,
    decodeMode: res.pool.stats().mode,
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
}

/**
 * Ends the source when the signal aborts, so the pipeline finishes on its own and the loop drains
 * the batches in flight. Aborting the pipeline instead would leave batches in its queues holding
 * batch buffers and upload slots that blocked stage tasks wait for, and its stop() would hang.
 */
/** `items` from number `skip` on (a resumed session's order, past what the checkpoint had done with). */
function* skipped<T>(items: Iterable<T>, skip: number): Generator<T> {
  let index = 0;
  for (const item of items) if (index++ >= skip) yield item;
}

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
