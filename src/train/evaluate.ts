// Held-out evaluation after an epoch: the held-out sources go through their own loader (sharing
// the decode pool), are normalised (never augmented) and run forward only.
import type { DecodePool } from '../decode/index.ts';
import type { GpuBatch, NormalizeKernel } from '../gpu/index.ts';
import type { ViTTrainer } from '../vit/index.ts';
import { loader } from '../loader/index.ts';
import type { LabelledSource } from './sources.ts';

export interface EvaluationContext {
  trainer: ViTTrainer;
  pool: DecodePool;
  device: GPUDevice;
  normalize: NormalizeKernel;
  held: readonly LabelledSource[];
  threads: number;
  batchSize: number;
  imageSize: number;
  images: GPUBuffer;
  labels: GPUBuffer;
  writeLabels(batch: GpuBatch): void;
  /** The session's stop signal: an abort during the pass ends it (its loader stops reading). */
  signal?: AbortSignal;
}

export async function evaluateHeldOut(c: EvaluationContext): Promise<{ accuracy: number; loss: number }> {
  if (c.held.length === 0) return { accuracy: NaN, loss: NaN };
  const data = loader(c.held, {
    to: c.device,
    normalize: false,
    pool: c.pool,
    batchSize: c.batchSize,
    size: c.imageSize,
    failureBudget: {},
    ...(c.signal ? { signal: c.signal } : {}),
  });
  try {
    async function* batches() {
      for await (const batch of data) {
        c.writeLabels(batch);
        const encoder = c.device.createCommandEncoder();
        c.normalize.encode(encoder, batch.buffer, c.images);
        c.device.queue.submit([encoder.finish()]);
        batch.release();
        yield { images: c.images, labels: c.labels };
      }
    }
    const result = await c.trainer.evaluate(batches());
    // A stop ends the loader's pass early: a partial pass is not an accuracy.
    return c.signal?.aborted ? { accuracy: NaN, loss: NaN } : result;
  } catch (error) {
    // A stop during the pass ends it like a stop during training: the session reports cancelled.
    if (c.signal?.aborted) return { accuracy: NaN, loss: NaN };
    throw error;
  } finally {
    await data.close();
  }
}
