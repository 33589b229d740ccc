import type * as tfc from '@tensorflow/tfjs-core';
import { acquireGpu, FeedError, type FeedOptions, type GpuContext, type HostBatch, type NormalizeOptions } from '../gpu/index.ts';
import {
  assertSameDevice,
  checkFeedShape,
  feedDims,
  liveBytes,
  GpuNormalizer,
  normalizeOnCpu,
  resolveFeed,
  type FeedShape,
} from '../gpu/internal.ts';
import { tfjsDevice, type Tf } from './backend.ts';

const DOOR = 'tandem/tfjs';

/** `layout` (of `xs`) defaults to NHWC, TensorFlow.js's own. */
export interface TfjsFeedOptions extends FeedOptions {
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
export class TfjsFeeder {
  readonly path: 'webgpu' | 'cpu';
  #tf: Tf;
  #shape: FeedShape;
  #options: TfjsFeedOptions;
  #normalize: NormalizeOptions;
  #gpu: GpuNormalizer | undefined;
  #output: GPUBuffer | undefined;
  /** Exact-size copies for short batches: tf.js takes a buffer's whole size as the tensor's data. */
  #shortOutputs = new Map<number, GPUBuffer>();
  #closed = false;

  private constructor(tf: Tf, shape: FeedShape, normalize: NormalizeOptions, options: TfjsFeedOptions, gpu?: GpuNormalizer) {
    this.#tf = tf;
    this.#shape = shape;
    this.#normalize = normalize;
    this.#options = options;
    this.#gpu = gpu;
    this.#output = gpu?.createOutput();
    this.path = gpu ? 'webgpu' : 'cpu';
  }

  static async create(tf: Tf, options: TfjsFeedOptions): Promise<TfjsFeeder> {
    const { shape, normalize } = resolveFeed(options, 'NHWC', 'TfjsFeeder.create options', ['labels', 'classes', 'gpu']);
    if (options.labels === 'one-hot' && !(options.classes && options.classes > 1)) {
      throw new FeedError('shape-mismatch', `${DOOR}: one-hot labels need \`classes\` (the number of classes, at least 2)`);
    }
    const device = await tfjsDevice(tf);
    if (!device) return new TfjsFeeder(tf, shape, normalize, options);
    if (options.gpu)
      assertSameDevice(options.gpu.device, device, "TensorFlow.js's WebGPU backend (call useDeviceForTfjs(tf, WebGPUBackend, gpu) first)");
    const gpu = options.gpu ?? (await acquireGpu({ device }));
    return new TfjsFeeder(tf, shape, normalize, options, await GpuNormalizer.create(gpu, shape, normalize));
  }

  /** The batch as tensors; the batch is released (its buffer goes back to the batcher) either way. */
  async tensors(batch: HostBatch): Promise<TfjsBatch> {
    const data = liveBytes(batch, DOOR); // a released batch has nothing left to give back
    let handedToGpu = false;
    try {
      if (this.#closed) throw new FeedError('closed', `${DOOR}: the feeder is closed`);
      checkFeedShape(batch, data, this.#shape, DOOR);
      this.#gpu?.checkDevice(DOOR);
      const keys = batch.keys ? batch.keys.slice(0, batch.count) : [];
      const ys = this.#labels(batch.labels.subarray(0, batch.count));
      handedToGpu = this.#gpu !== undefined; // GpuNormalizer.normalize releases the batch, also when it fails
      try {
        const xs = this.#gpu ? await this.#gpuImages(this.#gpu, batch) : this.#cpuImages(batch, data);
        return { xs, ys, keys };
      } catch (error) {
        ys.dispose();
        throw error;
      }
    } finally {
      if (!handedToGpu) batch.release();
    }
  }

  async #gpuImages(gpu: GpuNormalizer, batch: HostBatch): Promise<tfc.Tensor4D> {
    const full = this.#output!;
    const output = batch.count === this.#shape.batchSize ? full : this.#shortOutput(gpu, batch.count);
    await gpu.normalize(batch, full, (encoder) => {
      if (output !== full) encoder.copyBufferToBuffer(full, 0, output, 0, output.size);
    });
    // tf.js copies the buffer into one of its own and submits that copy before returning, so the
    // next batch's normalisation, later on the same queue, cannot reach this tensor.
    return this.#tf.tensor({ buffer: output }, feedDims(this.#shape, batch.count), 'float32') as tfc.Tensor4D;
  }

  #shortOutput(gpu: GpuNormalizer, count: number): GPUBuffer {
    let buffer = this.#shortOutputs.get(count);
    if (!buffer) {
      const { height, width, channels } = this.#shape;
      buffer = gpu.createOutput(count * height * width * channels * 4, `tandem tfjs short batch of ${count}`);
      this.#shortOutputs.set(count, buffer);
    }
    return buffer;
  }

  #cpuImages(batch: HostBatch, data: Uint8Array): tfc.Tensor4D {
    const values = normalizeOnCpu(data, batch.count, this.#shape, this.#normalize);
    return this.#tf.tensor(values, feedDims(this.#shape, batch.count), 'float32') as tfc.Tensor4D;
  }

  #labels(labels: Int32Array): tfc.Tensor {
    const tf = this.#tf;
    if (this.#options.labels !== 'one-hot') return tf.tensor1d(labels.slice(), 'int32');
    const classes = this.#options.classes!;
    // −1 is an unlabelled row (a list of paths, a Hub test split): all zeros, as tf.oneHot gives
    // for it. Past the classes is a misconfiguration, refused.
    const bad = labels.find((l) => l < -1 || l >= classes);
    if (bad !== undefined) throw new FeedError('shape-mismatch', `${DOOR}: label ${bad} is outside the ${classes} classes`);
    const oneHot = new Float32Array(labels.length * classes);
    for (let i = 0; i < labels.length; i++) {
      const label = labels[i] ?? -1;
      if (label >= 0) oneHot[i * classes + label] = 1;
    }
    return tf.tensor2d(oneHot, [labels.length, classes], 'float32');
  }

  /** `await using`: close() at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Frees the feeder's GPU buffers (not the device, and not tensors already handed out). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#gpu?.close();
    this.#output?.destroy();
    for (const buffer of this.#shortOutputs.values()) buffer.destroy();
  }
}
