// The loader the main job runs: files → read → decode on wasm threads into batch buffers →
// batches → upload into a ring of GPU buffers. Shared by the CLI subcommands.
import { DecodePool, ImageBatcher, type ImageBatch } from '../decode/index.ts';
import { BatchUploader, type GpuBatch, type UploadMethod } from '../gpu/index.ts';
import { Pipeline, PipelineBuilder } from '../pipeline/index.ts';
import { readFile } from '../runtime/index.ts';
import type { LabelledFile } from '../sources/index.ts';

export interface LoaderOptions {
  files: readonly LabelledFile[];
  device: GPUDevice;
  threads: number;
  batchSize: number;
  imageSize: number;
  epochs?: number;
  uploadMethod?: UploadMethod;
  readConcurrency?: number;
}

export interface Loader {
  pipeline: Pipeline<GpuBatch>;
  pool: DecodePool;
  close(): Promise<void>;
}

export async function createLoader(o: LoaderOptions): Promise<Loader> {
  const pool = await DecodePool.create({ threads: o.threads });
  const batcher = new ImageBatcher(pool, { batchSize: o.batchSize, height: o.imageSize, width: o.imageSize, channels: 3, buffers: 4 });
  const uploader = new BatchUploader(o.device, { maxBatchBytes: batcher.batchBytes, slots: 2, method: o.uploadMethod ?? 'write-buffer' });
  const pipeline = new PipelineBuilder()
    .addSource(o.files, { repeat: o.epochs ?? 1 })
    .pipe(async (f: LabelledFile) => ({ bytes: await readFile(f.path), label: f.label, key: f.path }), {
      name: 'read',
      concurrency: o.readConcurrency ?? 16,
    })
    .pipe(batcher.decodeStage, { name: 'decode', concurrency: o.threads * 2, ordered: 'input' })
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
      await pool.close();
    },
  };
}
