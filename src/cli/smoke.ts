// `tandem smoke`: the loader end to end on the generated dataset — read JPEG files, decode on
// wasm threads into shared batch buffers, upload into GPU buffers, normalise in WGSL — and report
// images/s, time to first batch and where the time went.
import { acquireGpu } from '../gpu/index.ts';
import { loader } from '../loader/index.ts';
import { hardwareConcurrency } from '../runtime/index.ts';
import { resolveDataFolder } from './files.ts';

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
  const gpu = await acquireGpu();
  o.log(`GPU: ${gpu.runtime}`);
  const data = loader(root, {
    batchSize: o.batchSize,
    size: o.imageSize,
    shuffle: true,
    epochs: o.epochs,
    threads: o.threads,
    to: gpu,
    failureBudget: {},
    consumer: 'normalise loop',
  });
  let images = 0;
  let batches = 0;
  let firstBatch = 0;
  let start = 0;
  try {
    const classes = await data.classes(); // lists the folder and starts the pool: not timed
    o.log(
      `loader: ${root} × ${o.epochs} epochs, ${classes.length} classes, ${o.threads} decode threads, batch ${o.batchSize} × ${o.imageSize}², normalised on the GPU`,
    );
    start = performance.now();
    for await (const batch of data) {
      if (batches === 0) firstBatch = (performance.now() - start) / 1000;
      batch.release();
      images += batch.count;
      batches++;
      // Bound the GPU queue so the wall time measures work done, not work queued.
      if (batches % 4 === 0) await data.waitFor(gpu.device.queue.onSubmittedWorkDone(), 'GPU');
    }
    await gpu.device.queue.onSubmittedWorkDone();
  } finally {
    await data.close();
  }
  const seconds = (performance.now() - start) / 1000;
  o.log(data.summary());
  gpu.close();
  return {
    images,
    batches,
    failures: data.failureCount(),
    seconds,
    imagesPerSecond: images / seconds,
    firstBatchSeconds: firstBatch,
    adapter: gpu.runtime,
  };
}
