// The loader a training session runs: byte sources → read → decode on wasm threads into batch
// buffers → batches → upload into a ring of GPU buffers. Also used by `tandem bench` and `profile`.
import { DecodePool, ImageBatcher, type ImageBatch } from '../decode/index.ts';
import { BatchUploader, type GpuBatch, type UploadMethod } from '../gpu/index.ts';
import { type Pipeline, PipelineBuilder } from '../pipeline/index.ts';
import { trainingSettingDefaults } from './options.ts';
import type { LabelledSource } from './sources.ts';

export interface LoaderOptions {
  /** The sources in the order to load them, all epochs (e.g. `shuffledEpochs(sources, seed, n)`). */
  source: Iterable<LabelledSource> | AsyncIterable<LabelledSource>;
  device: GPUDevice;
  /** Decode with this pool (shared by several loaders), else one of `threads` threads is made. */
  pool?: DecodePool;
  threads: number;
  batchSize: number;
  imageSize: number;
  uploadMethod?: UploadMethod;
  /** Reads in flight (default 16). */
  readConcurrency?: number;
  /** Batch buffers in the pool's memory (default 4) and GPU ring slots (default 2). */
  batchBuffers?: number;
  gpuSlots?: number;
  /** Batches the consumer's queue holds (default 2). */
  sinkDepth?: number;
  signal?: AbortSignal;
}

export interface Loader {
  pipeline: Pipeline<GpuBatch>;
  pool: DecodePool;
  /** Batch buffers and GPU slots not back in their pools (all 0 once every batch is released). */
  held(): { batchBuffers: number; gpuSlots: number };
  close(): Promise<void>;
}

/** The loader's stages, for `tandem profile`: the same functions the pipeline runs. */
export interface LoaderStages {
  read(source: LabelledSource): Promise<{ bytes: Uint8Array; label: number; key: string }>;
  batcher: ImageBatcher;
  uploader: BatchUploader;
  close(): Promise<void>;
}

export function loaderStages(
  pool: DecodePool,
  device: GPUDevice,
  o: Pick<LoaderOptions, 'batchSize' | 'imageSize' | 'uploadMethod' | 'batchBuffers' | 'gpuSlots'>,
): LoaderStages {
  const d = trainingSettingDefaults.loader;
  const batcher = new ImageBatcher(pool, {
    batchSize: o.batchSize,
    height: o.imageSize,
    width: o.imageSize,
    channels: 3,
    buffers: o.batchBuffers ?? d.batchBuffers,
  });
  const uploader = new BatchUploader(device, {
    maxBatchBytes: batcher.batchBytes,
    slots: o.gpuSlots ?? d.gpuSlots,
    method: o.uploadMethod ?? 'write-buffer',
  });
  return {
    read: async (s: LabelledSource) => ({ bytes: await s.read(), label: s.label, key: s.key }),
    batcher,
    uploader,
    async close() {
      await uploader.close();
      batcher.close();
    },
  };
}

export async function createLoader(o: LoaderOptions): Promise<Loader> {
  const ownPool = o.pool === undefined;
  const pool = o.pool ?? (await DecodePool.create({ threads: o.threads }));
  const stages = loaderStages(pool, o.device, o);
  const pipeline = new PipelineBuilder()
    .addSource(o.source)
    .pipe(stages.read, { name: 'read', concurrency: o.readConcurrency ?? trainingSettingDefaults.loader.readConcurrency })
    .batch(stages.batcher, { name: 'decode', concurrency: pool.maxInFlight, ordered: 'input' })
    .pipe((batch: ImageBatch, ctx) => stages.uploader.upload(batch, ctx.signal, ctx), { name: 'upload', concurrency: 1 })
    .addSink(o.sinkDepth ?? trainingSettingDefaults.loader.sinkDepth)
    .build(o.signal ? { signal: o.signal } : {});
  return {
    pipeline,
    pool,
    held() {
      const buffers = stages.batcher.stats();
      return { batchBuffers: buffers.buffers - buffers.free, gpuSlots: stages.uploader.slotCount - stages.uploader.freeSlots };
    },
    async close() {
      await pipeline.stop();
      await stages.close();
      if (ownPool) await pool.close();
    },
  };
}
