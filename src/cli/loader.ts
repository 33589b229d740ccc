// The loader the main job runs: files → read → decode on wasm threads into batch buffers →
// batches → upload into a ring of GPU buffers. Shared by the CLI subcommands.
import { DecodePool, ImageBatcher, type ImageBatch } from '../decode/index.ts';
import { BatchUploader, type GpuBatch, type UploadMethod } from '../gpu/index.ts';
import { Pipeline, PipelineBuilder } from '../pipeline/index.ts';
import { readFile } from '../runtime/index.ts';
import type { LabelledFile } from '../sources/index.ts';

export interface LoaderOptions {
  /** The files in the order to load them, all epochs (e.g. `shuffledEpochs(files, seed, n)`). */
  source: Iterable<LabelledFile>;
  device: GPUDevice;
  /** Decode with this pool (shared by several loaders), else one of `threads` threads is made. */
  pool?: DecodePool;
  threads: number;
  batchSize: number;
  imageSize: number;
  uploadMethod?: UploadMethod;
  readConcurrency?: number;
}

export interface Loader {
  pipeline: Pipeline<GpuBatch>;
  pool: DecodePool;
  close(): Promise<void>;
}

export async function createLoader(o: LoaderOptions): Promise<Loader> {
  const ownPool = o.pool === undefined;
  const pool = o.pool ?? (await DecodePool.create({ threads: o.threads }));
  const batcher = new ImageBatcher(pool, { batchSize: o.batchSize, height: o.imageSize, width: o.imageSize, channels: 3, buffers: 4 });
  const uploader = new BatchUploader(o.device, { maxBatchBytes: batcher.batchBytes, slots: 2, method: o.uploadMethod ?? 'write-buffer' });
  const pipeline = new PipelineBuilder()
    .addSource(o.source)
    .pipe(async (f: LabelledFile) => ({ bytes: await readFile(f.path), label: f.label, key: f.path }), {
      name: 'read',
      concurrency: o.readConcurrency ?? 16,
    })
    .pipe(batcher.decodeStage, { name: 'decode', concurrency: pool.threads * 2, ordered: 'input' })
    .aggregate(() => batcher.aggregator(), { name: 'batch' })
    .pipe((batch: ImageBatch) => uploader.upload(batch), { name: 'upload', concurrency: 1 })
    .addSink(2)
    .build();
  return {
    pipeline,
    pool,
    async close() {
      await pipeline.stop();
      await uploader.close();
      batcher.close();
      if (ownPool) await pool.close();
    },
  };
}
