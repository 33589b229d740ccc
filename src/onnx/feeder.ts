import type { Tensor } from 'onnxruntime-common';
import { acquireGpu, FeedError, type FeedOptions, type GpuContext, type HostBatch, type NormalizeOptions } from '../gpu/index.ts';
import {
  assertSameDevice,
  checkFeedShape,
  feedDims,
  GpuNormalizer,
  liveBytes,
  normalizeOnCpu,
  resolveFeed,
  type FeedShape,
} from '../gpu/internal.ts';
import { leasedBatch, SlotPool, type BatchEnds } from '../sync/index.ts';

const DOOR = 'tandem/onnx';

/** What this door needs of ONNX Runtime Web's namespace (`import * as ort from 'onnxruntime-web'`). */
export interface Ort {
  Tensor: typeof Tensor;
  env: { webgpu: { readonly device: Promise<GPUDevice> } };
}

/** `layout` defaults to NCHW, the ONNX convention. */
export interface OnnxFeedOptions extends FeedOptions {
  /**
   * Where the input tensors live: 'webgpu' for sessions on ONNX Runtime's WebGPU execution
   * provider (the feeder runs on ONNX Runtime's own device, `ort.env.webgpu.device`, adopted; pass
   * `gpu` to use a context of that device you already hold), 'cpu' (the default) for the wasm one.
   */
  location?: 'webgpu' | 'cpu';
  gpu?: GpuContext;
  /** GPU input buffers in flight (default 2): a batch's buffer returns when its tensor is disposed. */
  slots?: number;
}

export interface OnnxBatch extends BatchEnds {
  /** float32 [count, C, H, W] (or NHWC): on the GPU with a WebGPU device, else on the CPU. */
  readonly input: Tensor;
  readonly labels: Int32Array;
  readonly keys: readonly string[];
  readonly count: number;
  /** The same as release(), the name ONNX Runtime's tensors use. */
  dispose(): void;
}

/**
 * Turns Tandem batches into ONNX Runtime Web tensors. With a WebGPU device (ONNX Runtime's own,
 * adopted by Tandem) each batch is uploaded and normalised in WGSL into one of a few float
 * buffers and handed over with `Tensor.fromGpuBuffer`: no copy and no readback. The buffer is
 * lent to the tensor until the tensor is disposed, and only then refilled. Without one, the
 * normalisation runs on the CPU into the tensor's own Float32Array.
 */
export class OnnxFeeder {
  readonly path: 'webgpu' | 'cpu';
  #ort: Ort;
  #shape: FeedShape;
  #normalize: NormalizeOptions;
  #gpu: GpuNormalizer | undefined;
  #buffers: SlotPool<GPUBuffer> | undefined;
  #closed = false;

  private constructor(ort: Ort, shape: FeedShape, normalize: NormalizeOptions, gpu: GpuNormalizer | undefined, slots: number) {
    this.#ort = ort;
    this.#shape = shape;
    this.#normalize = normalize;
    this.#gpu = gpu;
    this.path = gpu ? 'webgpu' : 'cpu';
    if (gpu)
      this.#buffers = new SlotPool(
        Array.from({ length: Math.max(1, slots) }, (_, i) => gpu.createOutput(undefined, `tandem onnx input ${i}`)),
      );
  }

  static async create(ort: Ort, options: OnnxFeedOptions): Promise<OnnxFeeder> {
    const { shape, normalize } = resolveFeed(options, 'NCHW', 'OnnxFeeder.create options', ['location', 'gpu', 'slots']);
    if (options.location !== 'webgpu') return new OnnxFeeder(ort, shape, normalize, undefined, 0);
    const device = await ort.env.webgpu.device;
    if (options.gpu) assertSameDevice(options.gpu.device, device, "ONNX Runtime's WebGPU device (ort.env.webgpu.device)");
    const gpu = options.gpu ?? (await acquireGpu({ device }));
    return new OnnxFeeder(ort, shape, normalize, await GpuNormalizer.create(gpu, shape, normalize), options.slots ?? 2);
  }

  /** The batch as an input tensor; the batch is released (its buffer goes back to the batcher) either way. */
  async tensors(batch: HostBatch): Promise<OnnxBatch> {
    const data = liveBytes(batch, DOOR); // a released batch has nothing left to give back
    let handedToGpu = false;
    try {
      if (this.#closed) throw new FeedError('closed', `${DOOR}: the feeder is closed`);
      checkFeedShape(batch, data, this.#shape, DOOR);
      this.#gpu?.checkDevice(DOOR);
      const count = batch.count;
      const labels = batch.labels.slice(0, count);
      const keys = batch.keys ? batch.keys.slice(0, count) : [];
      const dims = feedDims(this.#shape, count);
      if (!this.#gpu) {
        return onnxBatch(new this.#ort.Tensor('float32', normalizeOnCpu(data, count, this.#shape, this.#normalize), dims), labels, keys);
      }
      const buffers = this.#buffers!;
      const buffer = buffers.tryAcquire() ?? (await buffers.acquire());
      handedToGpu = true; // GpuNormalizer.normalize releases the batch, also when it fails
      try {
        await this.#gpu.normalize(batch, buffer);
      } catch (error) {
        buffers.release(buffer);
        throw error;
      }
      let lent = true;
      const giveBack = () => {
        if (lent) buffers.release(buffer);
        lent = false;
      };
      return onnxBatch(this.#ort.Tensor.fromGpuBuffer(buffer, { dataType: 'float32', dims, dispose: giveBack }), labels, keys);
    } finally {
      if (!handedToGpu) batch.release();
    }
  }

  /** `await using`: close() at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Frees the feeder's GPU buffers once every tensor it lent has been disposed (not the device). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const buffers = this.#buffers;
    if (buffers) {
      const held: GPUBuffer[] = [];
      for (let i = 0; i < buffers.size; i++) held.push(await buffers.acquire());
      for (const b of held) b.destroy();
    }
    await this.#gpu?.close();
  }
}

/** `input` on the batch's lease: release() (or dispose()) disposes it, on the GPU giving its buffer back. */
function onnxBatch(input: Tensor, labels: Int32Array, keys: readonly string[]): OnnxBatch {
  const batch = leasedBatch('an ONNX batch', () => input.dispose(), { input }, { labels, keys, count: labels.length });
  return Object.assign(batch, { dispose: batch.release });
}
