// `tandem smoke`: the loader end to end on the generated dataset — read JPEG files, decode on
// wasm threads into shared batch buffers, upload into GPU buffers, normalise in WGSL — and report
// images/s, time to first batch and where the time went.
import { acquireGpu, NormalizeKernel } from '../gpu/index.ts';
import { formatStats } from '../pipeline/index.ts';
import { hardwareConcurrency } from '../runtime/index.ts';
import { listImageFolder, shuffledEpochs } from '../sources/index.ts';
import { createLoader } from '../train/index.ts';
import { fileSources, resolveDataFolder } from './files.ts';

export interface SmokeOptions {
  data?: string;
  images: number;
  epochs: number;
  batchSize: number;
  imageSize: number;
  threads: number;
  log: (line: string) => void;
}

export interface SmokeResult {
  images: number;
  batches: number;
  failures: number;
  seconds: number;
  imagesPerSecond: number;
  firstBatchSeconds: number;
  adapter: string;
}

export function defaultSmokeOptions(log: (line: string) => void): SmokeOptions {
  return { images: 512, epochs: 2, batchSize: 32, imageSize: 224, threads: Math.max(1, hardwareConcurrency()), log };
}

export async function runSmoke(o: SmokeOptions): Promise<SmokeResult> {
  const root = await resolveDataFolder(o.data, o.images, o.log);
  const { files, classes } = await listImageFolder(root);
  const gpu = await acquireGpu();
  o.log(`GPU: ${gpu.runtime}`);
  o.log(
    `loader: ${files.length} files × ${o.epochs} epochs, ${classes.length} classes, ${o.threads} decode threads, batch ${o.batchSize} × ${o.imageSize}²`,
  );
  const shape = { images: o.batchSize, height: o.imageSize, width: o.imageSize, channels: 3 };
  const kernel = await NormalizeKernel.create(gpu.device, shape);
  const normalized = gpu.device.createBuffer({ size: kernel.outputBytes, usage: GPUBufferUsage.STORAGE });
  const loader = await createLoader({
    source: shuffledEpochs(fileSources(files), 0, o.epochs),
    device: gpu.device,
    threads: o.threads,
    batchSize: o.batchSize,
    imageSize: o.imageSize,
  });
  loader.pipeline.consumer.name = 'normalise loop';
  let images = 0;
  let batches = 0;
  let firstBatch = 0;
  const start = performance.now();
  try {
    for await (const batch of loader.pipeline) {
      if (batches === 0) firstBatch = (performance.now() - start) / 1000;
      const encoder = gpu.device.createCommandEncoder();
      kernel.encode(encoder, batch.buffer, normalized);
      gpu.device.queue.submit([encoder.finish()]);
      batch.release();
      images += batch.count;
      batches++;
      // Bound the GPU queue so the wall time measures work done, not work queued.
      if (batches % 4 === 0) await loader.pipeline.consumer.waitFor(gpu.device.queue.onSubmittedWorkDone(), 'GPU');
    }
    await gpu.device.queue.onSubmittedWorkDone();
  } finally {
    await loader.close();
    kernel.destroy();
    normalized.destroy();
  }
  const seconds = (performance.now() - start) / 1000;
  const failures = loader.pipeline.failureCount();
  o.log(formatStats(loader.pipeline.stats()));
  gpu.close();
  return { images, batches, failures, seconds, imagesPerSecond: images / seconds, firstBatchSeconds: firstBatch, adapter: gpu.runtime };
}
