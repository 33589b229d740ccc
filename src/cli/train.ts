// `tandem train`: the whole path — JPEG files → wasm decode into batch buffers → GPU ring → WGSL
// augmentation → ViT forward, backward and AdamW in WGSL — with held-out evaluation, a progress
// line, the per-stage summary and a JSON report.
import { DecodePool } from '../decode/index.ts';
import { acquireGpu, AugmentKernel, NormalizeKernel, type GpuBatch, type GpuContext } from '../gpu/index.ts';
import { bottleneck, formatStats, type PipelineStats } from '../pipeline/index.ts';
import { cacheDir, hardwareConcurrency, writeFileAtomic } from '../runtime/index.ts';
import { ensureSyntheticFolder, holdOut, listImageFolder, shuffledEpochs, type LabelledFile } from '../sources/index.ts';
import { presets, ViTTrainer, type ViTConfig } from '../vit/index.ts';
import { createLoader } from './loader.ts';

export interface TrainOptions {
  data?: string;
  images: number;
  epochs: number;
  batchSize: number;
  threads: number;
  seed: number;
  lr: number;
  /** Random resized crop, flip and jitter on the GPU (default true); off, batches are only normalised. */
  augment: boolean;
  /** Write the final weights and optimizer state here (ViTTrainer.saveCheckpoint's bytes). */
  checkpoint?: string;
  log: (line: string) => void;
}

export interface EpochRecord {
  epoch: number;
  trainLoss: number;
  trainAccuracy: number;
  valAccuracy: number;
  valLoss: number;
  imagesPerSecond: number;
  seconds: number;
}

export interface TrainReport {
  adapter: string;
  model: ViTConfig;
  images: { train: number; validation: number; classes: string[] };
  epochs: EpochRecord[];
  steps: number;
  failures: number;
  loaderStats: PipelineStats | undefined;
  bottleneck: string | undefined;
  /** Time the training loop waited for the next batch (the GPU starved for data), and for the GPU. */
  waitedForDataSeconds: number;
  waitedForGpuSeconds: number;
  seconds: number;
}

export function defaultTrainOptions(log: (line: string) => void): TrainOptions {
  return { images: 1024, epochs: 12, batchSize: 32, threads: Math.max(1, hardwareConcurrency()), seed: 1, lr: 2e-3, augment: false, log };
}

export async function runTrain(o: TrainOptions): Promise<TrainReport> {
  const root = o.data ?? `${cacheDir()}/datasets/synthetic-s0-n${o.images}`;
  if (!o.data) await ensureSyntheticFolder(root, { count: o.images, onProgress: (d, t) => d % 128 === 0 && o.log(`  generated ${d}/${t} JPEGs`) });
  const { files, classes } = await listImageFolder(root);
  const { train, held } = holdOut(files, 5);
  const model: ViTConfig = { ...presets.tiny, classes: classes.length };
  // Batches run across epoch boundaries (the stream is all epochs' shuffles in a row).
  const steps = Math.ceil((train.length * o.epochs) / o.batchSize);
  const gpu = await acquireGpu();
  o.log(`GPU: ${gpu.runtime}`);
  o.log(`data: ${train.length} train / ${held.length} held-out images, ${classes.length} classes (${classes.join(', ')}); ${root}`);
  o.log(`model: ViT ${model.imageSize}px patch ${model.patchSize} width ${model.width} depth ${model.depth} heads ${model.heads}; ${o.epochs} epochs, ${steps} steps of ${o.batchSize}`);
  const pool = await DecodePool.create({ threads: o.threads });
  const B = o.batchSize;
  const size = model.imageSize;
  const trainer = await ViTTrainer.create(gpu.device, {
    config: model, batchSize: B, seed: o.seed,
    train: { lr: o.lr, warmupSteps: Math.min(20, Math.floor(steps / 10)), totalSteps: steps, weightDecay: 0.05, clipNorm: 1 },
  });
  const shape = { images: B, srcHeight: size, srcWidth: size, channels: 3, outHeight: size, outWidth: size };
  const augment = await AugmentKernel.create(gpu.device, shape, { scale: [0.6, 1], brightness: 0.1, contrast: 0.1 });
  const normalize = await NormalizeKernel.create(gpu.device, { images: B, height: size, width: size, channels: 3 });
  const images = gpu.device.createBuffer({ size: augment.outputBytes, usage: GPUBufferUsage.STORAGE });
  const labels = gpu.device.createBuffer({ size: B * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  const padded = new Int32Array(B);
  const ids = new Uint32Array(B);
  const report: TrainReport = {
    adapter: gpu.runtime, model, images: { train: train.length, validation: held.length, classes }, epochs: [], steps: 0,
    failures: 0, loaderStats: undefined, bottleneck: undefined, waitedForDataSeconds: 0, waitedForGpuSeconds: 0, seconds: 0,
  };
  const start = performance.now();
  const loader = await createLoader({ source: shuffledEpochs(train, o.seed, o.epochs), device: gpu.device, pool, threads: o.threads, batchSize: B, imageSize: size });
  const fences: Promise<undefined>[] = [];
  let step = 0;
  let seen = 0;
  let epochStart = performance.now();
  let epochImages = 0;
  try {
    const batches = loader.pipeline[Symbol.asyncIterator]();
    for (;;) {
      const waitStart = performance.now();
      const next = await batches.next();
      report.waitedForDataSeconds += (performance.now() - waitStart) / 1000;
      if (next.done) break;
      const batch = next.value;
      writeLabels(gpu, labels, batch, padded);
      for (let i = 0; i < B; i++) ids[i] = step * B + i;
      const encoder = gpu.device.createCommandEncoder();
      if (o.augment) augment.encode(encoder, batch.buffer, images, o.seed, ids);
      else normalize.encode(encoder, batch.buffer, images);
      trainer.step(encoder, images, labels);
      gpu.device.queue.submit([encoder.finish()]);
      batch.release();
      step++;
      seen += batch.count;
      epochImages += batch.count;
      // Keep at most two steps queued: memory stays bounded and the GPU never runs dry.
      fences.push(gpu.device.queue.onSubmittedWorkDone());
      if (fences.length > 2) {
        const fenceStart = performance.now();
        await fences.shift();
        report.waitedForGpuSeconds += (performance.now() - fenceStart) / 1000;
      }
      if (seen >= (report.epochs.length + 1) * train.length || step === steps) {
        const seconds = (performance.now() - epochStart) / 1000;
        const t = await trainer.readLoss();
        const v = await evaluate(trainer, pool, gpu, normalize, held, { ...o, imageSize: size }, images, labels, padded);
        const record = { epoch: report.epochs.length + 1, trainLoss: t.loss, trainAccuracy: t.accuracy, valAccuracy: v.accuracy, valLoss: v.loss, imagesPerSecond: epochImages / seconds, seconds };
        report.epochs.push(record);
        o.log(progress(record, o.epochs, step, steps, start));
        epochStart = performance.now();
        epochImages = 0;
      }
    }
    if (o.checkpoint) {
      await writeFileAtomic(o.checkpoint, await trainer.saveCheckpoint());
      o.log(`checkpoint: ${o.checkpoint}`);
    }
  } finally {
    report.loaderStats = loader.pipeline.stats();
    report.failures = loader.pipeline.failures().length;
    await loader.close();
    await pool.close();
    augment.destroy();
    normalize.destroy();
    trainer.destroy();
    images.destroy();
    labels.destroy();
    gpu.close();
  }
  report.steps = step;
  report.seconds = (performance.now() - start) / 1000;
  report.bottleneck = bottleneck(report.loaderStats)?.name;
  o.log(formatStats(report.loaderStats));
  return report;
}

function writeLabels(gpu: GpuContext, labels: GPUBuffer, batch: GpuBatch, padded: Int32Array<ArrayBuffer>): void {
  padded.fill(-1); // rows past `count` are padding: the loss and accuracy skip label −1
  padded.set(batch.labels);
  gpu.device.queue.writeBuffer(labels, 0, padded);
}

async function evaluate(
  trainer: ViTTrainer, pool: DecodePool, gpu: GpuContext, normalize: NormalizeKernel, held: LabelledFile[],
  o: TrainOptions & { imageSize: number }, images: GPUBuffer, labels: GPUBuffer, padded: Int32Array<ArrayBuffer>,
): Promise<{ accuracy: number; loss: number }> {
  const loader = await createLoader({ source: held, device: gpu.device, pool, threads: o.threads, batchSize: o.batchSize, imageSize: o.imageSize });
  try {
    async function* batches() {
      for await (const batch of loader.pipeline) {
        writeLabels(gpu, labels, batch, padded);
        const encoder = gpu.device.createCommandEncoder();
        normalize.encode(encoder, batch.buffer, images);
        gpu.device.queue.submit([encoder.finish()]);
        batch.release();
        yield { images, labels };
      }
    }
    return await trainer.evaluate(batches());
  } finally {
    await loader.close();
  }
}

function progress(r: EpochRecord, epochs: number, step: number, steps: number, start: number): string {
  const width = 20;
  const done = Math.round((step / steps) * width);
  const elapsed = (performance.now() - start) / 1000;
  const left = (elapsed / step) * (steps - step);
  return (
    `[${'#'.repeat(done)}${'.'.repeat(width - done)}] epoch ${r.epoch}/${epochs} step ${step}/${steps} ` +
    `loss ${r.trainLoss.toFixed(3)} acc ${(r.trainAccuracy * 100).toFixed(1)}% val ${(r.valAccuracy * 100).toFixed(1)}% ` +
    `${r.imagesPerSecond.toFixed(0)} img/s, ${left.toFixed(0)} s left`
  );
}
