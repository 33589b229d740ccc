import { FeedError } from './feed-error.ts';
import { BatchReleasedError, OptionChecker } from '../errors/index.ts';
import { GpuError, type GpuContext } from './device.ts';
import { NormalizeKernel, normalizeReference, type NormalizeOptions, type TensorLayout } from './normalize.ts';
import { BatchUploader, type HostBatch } from './uploader.ts';

export { FeedError, type FeedErrorCode } from './feed-error.ts';

/** What a framework feeder makes: batches of `batchSize` images of height × width × channels. */
export interface FeedShape {
  batchSize: number;
  height: number;
  width: number;
  channels: 1 | 3 | 4;
  layout: TensorLayout;
}

/** What every framework feeder is told: the batches it takes, the tensor layout, the normalisation. */
export interface FeedOptions {
  /** Images per batch, and each image's size (what the ImageBatcher makes). */
  batchSize: number;
  height: number;
  width: number;
  channels?: 1 | 3 | 4;
  /** Layout of the image tensor; each door has its framework's own default. */
  layout?: TensorLayout;
  /** Per-channel mean and std on the 0..1 scale (ImageNet's by default); [0,0,0] and [1,1,1] give plain 0..1. */
  mean?: readonly number[];
  std?: readonly number[];
}

/** The options every feeder takes; a door names its own (`labels`, `location` …) in `more`. */
const FEED_OPTIONS = ['batchSize', 'height', 'width', 'channels', 'layout', 'mean', 'std'] as const;

/** The feed's shape and normalisation, checked (OptionError names a bad field) and resolved once. */
export function resolveFeed(
  options: FeedOptions,
  defaultLayout: TensorLayout,
  where = 'feeder options',
  more: readonly string[] = [],
): { shape: FeedShape; normalize: NormalizeOptions } {
  const o = new OptionChecker(where, options, [...FEED_OPTIONS, ...more]);
  o.integer('batchSize', 0, 1, 65536);
  o.integer('height', 0, 1, 32768);
  o.integer('width', 0, 1, 32768);
  const channels = o.integer('channels', 3, 1, 4);
  if (channels === 2) o.fail('channels', '1, 3 or 4');
  if (o.raw('layout') !== undefined) o.oneOf('layout', defaultLayout, ['NCHW', 'NHWC']);
  o.numbers('mean', channels);
  o.numbers('std', channels, 0);
  return {
    shape: {
      batchSize: options.batchSize,
      height: options.height,
      width: options.width,
      channels: options.channels ?? 3,
      layout: options.layout ?? defaultLayout,
    },
    normalize: { ...(options.mean ? { mean: options.mean } : {}), ...(options.std ? { std: options.std } : {}) },
  };
}

/** The batch's bytes, or BatchReleasedError when it was released already. */
export function liveBytes(batch: HostBatch, door: string): Uint8Array {
  try {
    return batch.data;
  } catch (cause) {
    throw new BatchReleasedError(`${door}: batch ${batch.sequence} was already released; ask for its tensors before release()`, {
      cause,
    });
  }
}

/** Checks that a batch's bytes are of `shape`; a typed error names both shapes. */
export function checkFeedShape(batch: HostBatch, data: Uint8Array, shape: FeedShape, door: string): void {
  const [, h, w, c] = batch.shape;
  if (
    h !== shape.height ||
    w !== shape.width ||
    c !== shape.channels ||
    batch.count > shape.batchSize ||
    data.length < batch.count * h * w * c
  ) {
    throw new FeedError(
      'shape-mismatch',
      `${door}: batch ${batch.sequence} is ${batch.count}×${h}×${w}×${c}; this feeder takes up to ${shape.batchSize}×${shape.height}×${shape.width}×${shape.channels}`,
    );
  }
}

/** Tensor dimensions for `count` images in the feed's layout. */
export function feedDims(shape: FeedShape, count: number): [number, number, number, number] {
  const { height: h, width: w, channels: c } = shape;
  return shape.layout === 'NHWC' ? [count, h, w, c] : [count, c, h, w];
}

/** The CPU path: `count` images normalised into a new array (the framework's tensor owns it). */
export function normalizeOnCpu(data: Uint8Array, count: number, shape: FeedShape, options: NormalizeOptions): Float32Array {
  const { height, width, channels } = shape;
  // The layout is the feed's: the tensor is shaped by it, so the values must be laid out by it too.
  return normalizeReference(
    data.subarray(0, count * height * width * channels),
    { images: count, height, width, channels },
    { ...options, layout: shape.layout },
  );
}

/**
 * The GPU path shared by the framework doors: host batches go up through a ring of device buffers
 * and are normalised in WGSL into float buffers on the same device, one submit per batch.
 */
export class GpuNormalizer {
  readonly kernel: NormalizeKernel;
  #gpu: GpuContext;
  #uploader: BatchUploader;
  #lost: GPUDeviceLostInfo | undefined;

  private constructor(gpu: GpuContext, kernel: NormalizeKernel) {
    this.#gpu = gpu;
    this.kernel = kernel;
    this.#uploader = new BatchUploader(gpu.device, { maxBatchBytes: kernel.inputBytes, slots: 2 });
    void gpu.lost.then((info) => {
      this.#lost = info;
    });
  }

  static async create(gpu: GpuContext, shape: FeedShape, options: NormalizeOptions): Promise<GpuNormalizer> {
    const kernel = await NormalizeKernel.create(
      gpu.device,
      { images: shape.batchSize, height: shape.height, width: shape.width, channels: shape.channels },
      { ...options, layout: shape.layout },
    );
    return new GpuNormalizer(gpu, kernel);
  }

  /** A float buffer a normalised batch can be written to (STORAGE | COPY_SRC | COPY_DST). */
  createOutput(bytes = this.kernel.outputBytes, label = 'tandem normalized batch'): GPUBuffer {
    return this.#gpu.device.createBuffer({
      size: bytes,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
      label,
    });
  }

  /** Throws GpuError('device-lost') once the device is gone. */
  checkDevice(door: string): void {
    if (this.#lost) throw new GpuError('device-lost', `${door}: the GPU device was lost (${this.#lost.reason}): ${this.#lost.message}`);
  }

  /**
   * Uploads `batch` (released once its bytes are taken, also on failure), normalises it into
   * `output` (a full-batch buffer), lets `more` record extra commands, and submits.
   */
  async normalize(batch: HostBatch, output: GPUBuffer, more?: (encoder: GPUCommandEncoder) => void): Promise<void> {
    const device = this.#gpu.device;
    const onGpu = await this.#uploader.upload(batch);
    try {
      const encoder = device.createCommandEncoder({ label: 'tandem feed normalize' });
      this.kernel.encode(encoder, onGpu.buffer, output);
      more?.(encoder);
      device.queue.submit([encoder.finish()]);
    } finally {
      onGpu.release(); // the commands that read the slot are submitted
    }
  }

  async close(): Promise<void> {
    await this.#uploader.close();
    this.kernel.destroy();
  }
}
