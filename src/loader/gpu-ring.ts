// The loader's GPU end: decoded u8 batches go up through the upload ring, are normalised in WGSL
// into a ring of float buffers, and are handed out as DeviceBatch; a float buffer is refilled only
// after its batch is released (the same rule as the upload ring: the refill is a later queue
// operation, so it cannot overtake the commands the consumer submitted before releasing).
import type { ImageBatch } from '../decode/index.ts';
import { BatchReleasedError } from '../errors/index.ts';
import { BatchUploader, NormalizeKernel, type GpuContext, type NormalizeOptions, type TensorLayout } from '../gpu/index.ts';
import type { StageContext } from '../pipeline/index.ts';
import { SlotPool } from '../sync/index.ts';

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

interface OutputSlot {
  images: GPUBuffer;
  labels: GPUBuffer;
}

export interface GpuRingShape {
  batchSize: number;
  height: number;
  width: number;
  channels: 1 | 3 | 4;
}

export class NormalizedRing {
  readonly #gpu: GpuContext;
  readonly #kernel: NormalizeKernel;
  readonly #uploader: BatchUploader;
  readonly #slots: SlotPool<OutputSlot>;
  readonly #shape: GpuRingShape;
  readonly #layout: TensorLayout;
  /** Labels padded to the batch size, written into the slot's label buffer (reused: no per-batch allocation). */
  readonly #padded: Int32Array<ArrayBuffer>;
  #closed = false;

  private constructor(gpu: GpuContext, kernel: NormalizeKernel, shape: GpuRingShape, layout: TensorLayout, slots: number) {
    this.#gpu = gpu;
    this.#kernel = kernel;
    this.#shape = shape;
    this.#layout = layout;
    this.#padded = new Int32Array(shape.batchSize);
    this.#uploader = new BatchUploader(gpu.device, { maxBatchBytes: kernel.inputBytes, slots: 2 });
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    this.#slots = new SlotPool(
      Array.from({ length: slots }, (_, i) => ({
        images: gpu.device.createBuffer({ size: kernel.outputBytes, usage, label: `tandem loader images ${i}` }),
        labels: gpu.device.createBuffer({ size: shape.batchSize * 4, usage, label: `tandem loader labels ${i}` }),
      })),
    );
  }

  static async create(
    gpu: GpuContext,
    shape: GpuRingShape,
    normalize: NormalizeOptions & { layout: TensorLayout },
    slots: number,
  ): Promise<NormalizedRing> {
    const kernel = await NormalizeKernel.create(
      gpu.device,
      { images: shape.batchSize, height: shape.height, width: shape.width, channels: shape.channels },
      normalize,
    );
    return new NormalizedRing(gpu, kernel, shape, normalize.layout, slots);
  }

  /** Float buffers lent to batches not yet released. */
  get held(): number {
    return this.#slots.size - this.#slots.available;
  }

  /** The pipeline stage: upload, normalise and submit; the CPU batch is released once uploaded. */
  async convert(batch: ImageBatch, ctx: StageContext): Promise<DeviceBatch> {
    let slot: OutputSlot;
    try {
      slot = this.#slots.tryAcquire() ?? (await ctx.waitFor(this.#slots.acquire(ctx.signal)));
    } catch (error) {
      batch.release();
      throw error;
    }
    try {
      const count = batch.count;
      const padded = this.#padded;
      padded.set(batch.labels);
      padded.fill(-1, count);
      const labels = padded.slice(0, count);
      const keys = batch.keys;
      const onGpu = await this.#uploader.upload(batch, ctx.signal, ctx);
      const device = this.#gpu.device;
      try {
        device.queue.writeBuffer(slot.labels, 0, padded);
        const encoder = device.createCommandEncoder({ label: 'tandem loader normalize' });
        this.#kernel.encode(encoder, onGpu.buffer, slot.images);
        device.queue.submit([encoder.finish()]);
      } finally {
        onGpu.release(); // the commands that read the upload slot are submitted
      }
      return this.#handle(slot, count, labels, keys);
    } catch (error) {
      this.#slots.release(slot);
      throw error;
    }
  }

  #handle(slot: OutputSlot, count: number, labels: Int32Array, keys: readonly string[]): DeviceBatch {
    const { height: h, width: w, channels: c } = this.#shape;
    let released = false;
    const guard = () => {
      if (released) throw new BatchReleasedError('a loader batch was used after release()');
    };
    const release = () => {
      if (released) throw new BatchReleasedError('a loader batch was released twice');
      released = true;
      if (!this.#closed) this.#slots.release(slot);
    };
    return {
      count,
      shape: this.#layout === 'NCHW' ? [count, c, h, w] : [count, h, w, c],
      dtype: 'float32',
      layout: this.#layout,
      get images() {
        guard();
        return slot.images;
      },
      get labelBuffer() {
        guard();
        return slot.labels;
      },
      labels,
      keys,
      release,
      [Symbol.dispose]: () => {
        if (!released) release();
      },
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#uploader.close();
    this.#kernel.destroy();
    for (const slot of this.#slots.slots) {
      slot.images.destroy();
      slot.labels.destroy();
    }
  }
}
