import type * as tfc from '@tensorflow/tfjs-core';
import {
  acquireGpu,
  assertSameDevice,
  BatchUploader,
  GpuError,
  NormalizeKernel,
  normalizeReference,
  type GpuContext,
  type HostBatch,
  type NormalizeOptions,
  type TensorLayout,
} from '../gpu/index.ts';
import { tfjsDevice, type Tf } from './backend.ts';
import { TfjsError } from './errors.ts';

export interface TfjsFeedOptions {
  /** Images per batch, and each image's size (what the ImageBatcher makes). */
  batchSize: number;
  height: number;
  width: number;
  channels?: 1 | 3 | 4;
  /** Layout of `xs`: NHWC (TensorFlow.js's own, the default) or NCHW. */
  layout?: TensorLayout;
  /** Per-channel mean and std on the 0..1 scale (ImageNet's by default); [0,0,0] and [1,1,1] give plain 0..1. */
  mean?: readonly number[];
  std?: readonly number[];
  /** `ys` as int32 class indices ('int', the default) or float32 one-hot rows over `classes`. */
  labels?: 'int' | 'one-hot';
  classes?: number;
  /**
   * The GpuContext Tandem runs on, for the WebGPU path; it must be TensorFlow.js's device
   * (useDeviceForTfjs). Without it the feeder adopts TensorFlow.js's device.
   */
  gpu?: GpuContext;
}

export interface TfjsBatch {
  /** Normalised float32 images: [count, H, W, C] (NHWC) or [count, C, H, W] (NCHW). Yours to dispose. */
  xs: tfc.Tensor4D;
  /** Labels: int32 [count], or float32 one-hot [count, classes]. Yours to dispose. */
  ys: tfc.Tensor;
  keys: readonly string[];
}

/**
 * Turns Tandem batches (u8 NHWC in shared wasm memory) into TensorFlow.js tensors.
 *
 * On the WebGPU backend the bytes go up through Tandem's ring of device buffers and are normalised
 * in WGSL into a float buffer on the same device; the tensor is made from that buffer with
 * `tf.tensor({ buffer })`, which copies it on the GPU and submits the copy at once. So no byte of
 * the batch goes through the CPU, and a tensor never shares memory with Tandem's buffers: reusing
 * them cannot change a tensor a model still holds. On other backends (cpu, wasm, webgl,
 * tfjs-node) the same normalisation runs on the CPU into a new Float32Array the tensor owns.
 */
type ResolvedOptions = Required<Pick<TfjsFeedOptions, 'batchSize' | 'height' | 'width' | 'channels' | 'layout' | 'labels'>> &
  TfjsFeedOptions;

export class TfjsFeeder {
  readonly path: 'webgpu' | 'cpu';
  #tf: Tf;
  #o: ResolvedOptions;
  #gpu: GpuContext | undefined;
  #uploader: BatchUploader | undefined;
  #normalize: NormalizeKernel | undefined;
  #output: GPUBuffer | undefined;
  /** Exact-size copies for short batches: tf.js takes a buffer's whole size as the tensor's data. */
  #shortOutputs = new Map<number, GPUBuffer>();
  #lost: GPUDeviceLostInfo | undefined;
  #closed = false;

  private constructor(tf: Tf, o: ResolvedOptions, gpu?: GpuContext, kernel?: NormalizeKernel) {
    this.#tf = tf;
    this.#o = o;
    this.path = gpu ? 'webgpu' : 'cpu';
    if (gpu && kernel) {
      this.#gpu = gpu;
      this.#normalize = kernel;
      this.#uploader = new BatchUploader(gpu.device, { maxBatchBytes: kernel.inputBytes, slots: 2 });
      this.#output = gpu.device.createBuffer({
        size: kernel.outputBytes,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
        label: 'tandem tfjs normalized batch',
      });
      void gpu.lost.then((info) => {
        this.#lost = info;
      });
    }
  }

  static async create(tf: Tf, options: TfjsFeedOptions): Promise<TfjsFeeder> {
    const o = { channels: 3 as const, layout: 'NHWC' as const, labels: 'int' as const, ...options };
    if (o.labels === 'one-hot' && !(o.classes && o.classes > 1)) {
      throw new TfjsError('shape-mismatch', 'tandem/tfjs: one-hot labels need `classes` (the number of classes, at least 2)');
    }
    const device = await tfjsDevice(tf);
    if (!device) return new TfjsFeeder(tf, o);
    if (o.gpu)
      assertSameDevice(o.gpu.device, device, "TensorFlow.js's WebGPU backend (call useDeviceForTfjs(tf, WebGPUBackend, gpu) first)");
    const gpu = o.gpu ?? (await acquireGpu({ device }));
    const kernel = await NormalizeKernel.create(
      gpu.device,
      { images: o.batchSize, height: o.height, width: o.width, channels: o.channels },
      normalizeOptions(o),
    );
    return new TfjsFeeder(tf, o, gpu, kernel);
  }

  /** The batch as tensors; the batch is released (its buffer goes back to the batcher) either way. */
  async tensors(batch: HostBatch): Promise<TfjsBatch> {
    let data: Uint8Array;
    try {
      data = batch.data;
    } catch (cause) {
      throw new TfjsError(
        'batch-released',
        `tandem/tfjs: batch ${batch.sequence} was already released; ask for its tensors before release()`,
        { cause },
      );
    }
    let handedToUploader = false;
    try {
      this.#check(batch, data);
      const labels = batch.labels.slice(0, batch.count);
      const keys = batch.keys ? batch.keys.slice(0, batch.count) : [];
      const ys = this.#labels(labels);
      handedToUploader = this.#uploader !== undefined; // upload() releases the batch, also when it fails
      try {
        const xs = this.#uploader ? await this.#gpuImages(batch) : this.#cpuImages(batch, data);
        return { xs, ys, keys };
      } catch (error) {
        ys.dispose();
        throw error;
      }
    } finally {
      if (!handedToUploader) batch.release();
    }
  }

  #check(batch: HostBatch, data: Uint8Array): void {
    if (this.#closed) throw new TfjsError('closed', 'tandem/tfjs: the feeder is closed');
    if (this.#lost) throw new GpuError('device-lost', `tandem/tfjs: the GPU device was lost (${this.#lost.reason}): ${this.#lost.message}`);
    const [, h, w, c] = batch.shape;
    const o = this.#o;
    if (h !== o.height || w !== o.width || c !== o.channels || batch.count > o.batchSize || data.length < batch.count * h * w * c) {
      throw new TfjsError(
        'shape-mismatch',
        `tandem/tfjs: batch ${batch.sequence} is ${batch.count}×${h}×${w}×${c}; this feeder takes up to ${o.batchSize}×${o.height}×${o.width}×${o.channels}`,
      );
    }
  }

  #shape(count: number): [number, number, number, number] {
    const { height: h, width: w, channels: c, layout } = this.#o;
    return layout === 'NHWC' ? [count, h, w, c] : [count, c, h, w];
  }

  async #gpuImages(batch: HostBatch): Promise<tfc.Tensor4D> {
    const device = this.#gpu!.device;
    const onGpu = await this.#uploader!.upload(batch);
    try {
      const encoder = device.createCommandEncoder({ label: 'tandem tfjs normalize' });
      this.#normalize!.encode(encoder, onGpu.buffer, this.#output!);
      const output = this.#outputFor(batch.count);
      if (output !== this.#output) encoder.copyBufferToBuffer(this.#output!, 0, output, 0, output.size);
      device.queue.submit([encoder.finish()]);
      // tf.js copies the buffer into one of its own and submits that copy before returning, so the
      // next batch's normalisation, later on the same queue, cannot reach this tensor.
      return this.#tf.tensor({ buffer: output }, this.#shape(batch.count), 'float32') as tfc.Tensor4D;
    } finally {
      onGpu.release(); // the normalisation that reads the slot is submitted
    }
  }

  #outputFor(count: number): GPUBuffer {
    if (count === this.#o.batchSize) return this.#output!;
    let buffer = this.#shortOutputs.get(count);
    if (!buffer) {
      const { height, width, channels } = this.#o;
      buffer = this.#gpu!.device.createBuffer({
        size: count * height * width * channels * 4,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
        label: `tandem tfjs short batch of ${count}`,
      });
      this.#shortOutputs.set(count, buffer);
    }
    return buffer;
  }

  #cpuImages(batch: HostBatch, data: Uint8Array): tfc.Tensor4D {
    const { height, width, channels } = this.#o;
    const shape = { images: batch.count, height, width, channels };
    const pixels = data.subarray(0, batch.count * height * width * channels);
    const values = normalizeReference(pixels, shape, normalizeOptions(this.#o));
    return this.#tf.tensor(values, this.#shape(batch.count), 'float32') as tfc.Tensor4D;
  }

  #labels(labels: Int32Array): tfc.Tensor {
    const tf = this.#tf;
    if (this.#o.labels === 'int') return tf.tensor1d(labels, 'int32');
    const classes = this.#o.classes!;
    const bad = labels.find((l) => l < 0 || l >= classes);
    if (bad !== undefined) throw new TfjsError('shape-mismatch', `tandem/tfjs: label ${bad} is outside the ${classes} classes`);
    const oneHot = new Float32Array(labels.length * classes);
    for (let i = 0; i < labels.length; i++) oneHot[i * classes + labels[i]!] = 1;
    return tf.tensor2d(oneHot, [labels.length, classes], 'float32');
  }

  /** Frees the feeder's GPU buffers (not the device, and not tensors already handed out). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#uploader?.close();
    this.#normalize?.destroy();
    this.#output?.destroy();
    for (const buffer of this.#shortOutputs.values()) buffer.destroy();
  }
}

function normalizeOptions(o: TfjsFeedOptions): NormalizeOptions {
  return { layout: o.layout ?? 'NHWC', ...(o.mean ? { mean: o.mean } : {}), ...(o.std ? { std: o.std } : {}) };
}
