// The loader's stages one by one, for `tandem profile`, which times each stage alone at several
// concurrencies: the same pieces loader() wires (read, ImageBatcher, BatchUploader), built the same way.
import { type DecodePool, ImageBatcher } from '../decode/index.ts';
import { BatchUploader, type UploadMethod } from '../gpu/index.ts';
import { trainingSettingDefaults } from './options.ts';
import type { LabelledSource } from './sources.ts';

export interface LoaderStageOptions {
  batchSize: number;
  imageSize: number;
  uploadMethod?: UploadMethod;
  /** Batch buffers in the pool's memory (default 4) and GPU ring slots (default 2). */
  batchBuffers?: number;
  gpuSlots?: number;
}

/** The loader's stages, for `tandem profile`: the same functions the pipeline runs. */
export interface LoaderStages {
  read(source: LabelledSource): Promise<{ bytes: Uint8Array; label: number; key: string }>;
  batcher: ImageBatcher;
  uploader: BatchUploader;
  close(): Promise<void>;
}

export function loaderStages(pool: DecodePool, device: GPUDevice, o: LoaderStageOptions): LoaderStages {
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
