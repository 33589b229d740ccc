// The loader's GPU end: decoded u8 batches go through the one GPU ring (src/gpu/ring.ts), are
// normalised in WGSL into its float buffers, and are handed out as DeviceBatch.
import type { ImageBatch } from '../decode/index.ts';
import { NormalizeKernel, type GpuContext, type NormalizeOptions, type TensorLayout } from '../gpu/index.ts';
import { DeviceRing } from '../gpu/internal.ts';
import type { StageContext } from '../pipeline/index.ts';

/** A normalised batch on the GPU, in one of the loader's float buffers until release(). */
export interface DeviceBatch {
  readonly count: number;
  /** [count, channels, height, width] (NCHW) or [count, height, width, channels] (NHWC). */
  readonly shape: readonly [number, number, number, number];
  readonly dtype: 'float32';
  readonly layout: TensorLayout;
  /** f32, sized for a full batch (batchSize rows); rows past `count` hold stale values. */
  readonly images: GPUBuffer;
  /** i32 [batchSize]: the labels, −1 past `count` (what Tandem's ViT takes: −1 rows are ignored). */
  readonly labelBuffer: GPUBuffer;
  readonly labels: Int32Array;
  readonly keys: readonly string[];
  /** Call after submitting the commands that read `images` and `labelBuffer`. */
  release(): void;
  [Symbol.dispose](): void;
}

export interface GpuRingShape {
  batchSize: number;
  height: number;
  width: number;
  channels: 1 | 3 | 4;
}

/** The `to: gpu` stage: upload, normalise into a free set of `sets`, submit; the CPU batch is released once uploaded. */
export async function openNormalizedRing(
  gpu: GpuContext,
  shape: GpuRingShape,
  normalize: NormalizeOptions & { layout: TensorLayout },
  sets: number,
): Promise<{ convert: (batch: ImageBatch, ctx: StageContext) => Promise<DeviceBatch>; held: () => number; close: () => Promise<void> }> {
  const { batchSize, height: h, width: w, channels: c } = shape;
  const kernel = await NormalizeKernel.create(gpu.device, { images: batchSize, height: h, width: w, channels: c }, normalize);
  const buffers = { images: kernel.outputBytes, labelBuffer: batchSize * 4 };
  const ring = new DeviceRing(gpu.device, { buffers, sets, maxBatchBytes: kernel.inputBytes, label: 'tandem loader' });
  const layout = normalize.layout;
  /** Labels padded to the batch size, written into the set's label buffer (reused: no per-batch allocation). */
  const padded = new Int32Array(batchSize);
  const convert = (batch: ImageBatch, ctx: StageContext): Promise<DeviceBatch> =>
    ring.convert(batch, ctx, (encoder, uploaded, set) => {
      const { count, labels, keys } = uploaded;
      padded.set(labels);
      padded.fill(-1, count);
      gpu.device.queue.writeBuffer(set.labelBuffer, 0, padded);
      kernel.encode(encoder, uploaded.buffer, set.images);
      const dims: [number, number, number, number] = layout === 'NCHW' ? [count, c, h, w] : [count, h, w, c];
      return { count, shape: dims, dtype: 'float32' as const, layout, labels, keys };
    });
  const close = async () => {
    await ring.close();
    kernel.destroy();
  };
  return { convert, held: () => ring.held, close };
}
