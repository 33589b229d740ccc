// The trained model, kept in the training worker after training ends so the page can try it. The
// session destroys its own trainer when it returns, so the final weights go into a second,
// forward-only use of ViTTrainer on the same device. Images reach it through the loader training
// used (read → DecodePool/ImageBatcher at the model's size → GPU upload → NormalizeKernel), so a
// dropped file is decoded, resized and normalised exactly as a held-out image was.
import { DecodeError, DecodePool } from '../src/decode/index.ts';
import { NormalizeKernel, type GpuContext } from '../src/gpu/index.ts';
import type { FailureRecord } from '../src/pipeline/index.ts';
import { loader } from '../src/loader/index.ts';
import { memorySource, type LabelledSource } from '../src/train/index.ts';
import { ViTTrainer, type ViTConfig } from '../src/vit/index.ts';

/** One image the model saw: its key, true label (−1: none) and the softmax of its logits. */
export interface Prediction {
  key: string;
  label: number;
  probabilities: number[];
}

/** Why an image gave no prediction, as plain data for postMessage: a DecodeError's code, or 'error'. */
export interface PredictionFailure {
  key: string;
  code: string;
  message: string;
}

export class TrainedModel {
  readonly #cleanup: Array<() => void | Promise<void>>;

  private constructor(
    readonly config: ViTConfig,
    readonly gpu: GpuContext,
    readonly pool: DecodePool,
    readonly trainer: ViTTrainer,
    readonly normalize: NormalizeKernel,
    readonly images: GPUBuffer,
    readonly threads: number,
    cleanup: Array<() => void | Promise<void>>,
  ) {
    this.#cleanup = cleanup;
  }

  /** Takes ownership of `gpu`: close() releases it with everything else, as does a failed open. */
  static async open(
    gpu: GpuContext,
    config: ViTConfig,
    params: Float32Array<ArrayBuffer>,
    o: { threads: number; batchSize: number },
  ): Promise<TrainedModel> {
    const cleanup: Array<() => void | Promise<void>> = [() => gpu.close()];
    try {
      const device = gpu.device;
      const pool = await DecodePool.create({ threads: o.threads });
      cleanup.push(() => pool.close());
      const trainer = await ViTTrainer.create(device, { config, batchSize: o.batchSize, params });
      cleanup.push(() => trainer.destroy());
      const size = config.imageSize;
      // The normalisation the held-out evaluation uses (ImageNet mean/std, NCHW), never augmentation.
      const normalize = await NormalizeKernel.create(device, { images: o.batchSize, height: size, width: size, channels: 3 });
      cleanup.push(() => normalize.destroy());
      const images = device.createBuffer({ size: normalize.outputBytes, usage: GPUBufferUsage.STORAGE });
      cleanup.push(() => images.destroy());
      return new TrainedModel(config, gpu, pool, trainer, normalize, images, o.threads, cleanup);
    } catch (e) {
      await closeInReverse(cleanup);
      throw e;
    }
  }

  /** The model's predictions for `sources`, in the loader's order, and the ones that failed to decode. */
  async predict(sources: readonly LabelledSource[]): Promise<{ predictions: Prediction[]; failures: PredictionFailure[] }> {
    const { predictions, failures } = await this.#run(sources);
    return { predictions, failures: failures.map((f) => failure(f.input, f.error)) };
  }

  /** Class probabilities for one file's bytes; rethrows the decoder's DecodeError if they are no image. */
  async classify(name: string, bytes: Uint8Array): Promise<number[]> {
    const { predictions, failures } = await this.#run([memorySource(name, -1, bytes)]);
    if (predictions[0]) return predictions[0].probabilities;
    throw failures[0]?.error ?? new Error(`${name}: the loader returned neither an image nor a failure`);
  }

  close(): Promise<void> {
    return closeInReverse(this.#cleanup);
  }

  async #run(sources: readonly LabelledSource[]): Promise<{ predictions: Prediction[]; failures: readonly FailureRecord[] }> {
    const device = this.gpu.device;
    const classes = this.config.classes;
    const data = loader(sources, {
      to: device,
      normalize: false,
      pool: this.pool,
      batchSize: this.trainer.batchSize,
      size: this.config.imageSize,
      failureBudget: {},
    });
    const predictions: Prediction[] = [];
    try {
      for await (const batch of data) {
        const encoder = device.createCommandEncoder();
        this.normalize.encode(encoder, batch.buffer, this.images);
        device.queue.submit([encoder.finish()]);
        const rows = Array.from({ length: batch.count }, (_, i) => ({ key: batch.keys[i] ?? '', label: batch.labels[i] ?? -1 }));
        batch.release(); // the normalisation is submitted: the upload slot may be refilled
        const logits = await this.trainer.predict(this.images);
        for (const [i, row] of rows.entries())
          predictions.push({ ...row, probabilities: softmax(logits.subarray(i * classes, (i + 1) * classes)) });
      }
      return { predictions, failures: data.failures() };
    } finally {
      await data.close();
    }
  }
}

/** A failure record as plain data: a DecodeError keeps its code (the page words its message by it). */
export function failure(key: string, error: unknown): PredictionFailure {
  if (error instanceof DecodeError) return { key, code: error.code, message: error.detail };
  return { key, code: 'error', message: error instanceof Error ? error.message : String(error) };
}

/** Numerically stable softmax (the loss kernel's form: exp(x − max) / Σ). */
function softmax(logits: Float32Array): number[] {
  const max = Math.max(...logits);
  const exps = Array.from(logits, (x) => Math.exp(x - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

/** Runs every step, newest first, even past one that throws; the first error is rethrown at the end. */
async function closeInReverse(steps: Array<() => void | Promise<void>>): Promise<void> {
  let first: { error: unknown } | undefined;
  while (steps.length > 0) {
    try {
      await steps.pop()?.();
    } catch (error) {
      first ??= { error };
    }
  }
  if (first) throw first.error;
}
