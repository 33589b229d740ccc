// ViTTrainer: a Vision Transformer trained entirely in WGSL. `step` records forward, backward and
// AdamW into the caller's command encoder (one compute pass); the loss is accumulated on the GPU
// and read back only when asked, through a staging buffer, so the queue never drains for it.
import { OptionChecker } from '../errors/index.ts';
import { readBuffer } from '../gpu/index.ts';
import { loadTrainer, saveTrainer } from './checkpoint.ts';
import { defaultTrain, dims, initParams, layerNormEps, paramLayout, type ParamLayout, type TrainConfig, type ViTConfig } from './config.ts';
import { buildGraph, type StepGraph } from './graph.ts';
import { optimValues } from './params.ts';
import { Kernels, record, recordOne, type Dispatch, type MatmulKernel } from './kernels.ts';

export { defaultTrain, dims, initParams, learningRate, paramLayout, presets, type TrainConfig, type ViTConfig } from './config.ts';

export interface TrainerOptions {
  config: ViTConfig;
  /** Every step and evaluation batch has exactly this many rows; pad with label −1 (ignored). */
  batchSize: number;
  train?: Partial<TrainConfig>;
  seed?: number;
  /** Matmul kernel ('auto': direct on CPU adapters, tiled on GPUs) and tiled shape; see Kernels.create. */
  matmul?: MatmulKernel | 'auto';
  matmulTile?: [number, number];
  /** Initial parameters in the flat layout (else seeded init). */
  params?: Float32Array<ArrayBuffer>;
}

export interface LossReport {
  /** Mean loss and accuracy over the labelled rows since the previous report. */
  loss: number;
  accuracy: number;
  samples: number;
  steps: number;
  /** Optimizer state after the last step included: step count, learning rate, global grad norm. */
  step: number;
  lr: number;
  gradNorm: number;
}

export interface Batch {
  images: GPUBuffer;
  labels: GPUBuffer;
}

const MAGIC = 0x54564954; // "TVIT"

export class ViTTrainer {
  readonly config: ViTConfig;
  readonly batchSize: number;
  readonly train: TrainConfig;
  readonly layout: ParamLayout;
  readonly #device: GPUDevice;
  readonly #kernels: Kernels;
  /** The matmul kernel in use ('direct' on CPU adapters by default). */
  get matmulKernel(): MatmulKernel {
    return this.#kernels.matmulKernel;
  }
  readonly #g: StepGraph;
  readonly #stats: GPUBuffer;
  readonly #evalStats: GPUBuffer;
  readonly #patchify = new WeakMap<GPUBuffer, Dispatch>();
  readonly #loss = new WeakMap<GPUBuffer, Dispatch>();
  readonly #evalLoss = new WeakMap<GPUBuffer, Dispatch>();
  readonly #staging: GPUBuffer[] = [];

  private constructor(device: GPUDevice, kernels: Kernels, o: TrainerOptions) {
    this.#device = device;
    this.#kernels = kernels;
    this.config = o.config;
    this.batchSize = o.batchSize;
    this.train = { ...defaultTrain, ...o.train };
    this.layout = paramLayout(o.config);
    const t = this.train;
    const hyper = optimValues(this.layout.size, this.layout.decayEnd, t);
    const params = o.params ?? initParams(o.config, o.seed ?? 1);
    if (params.length !== this.layout.size) throw new RangeError(`vit: ${params.length} parameters, layout needs ${this.layout.size}`);
    this.#g = buildGraph(device, kernels, o.config, o.batchSize, hyper);
    this.#stats = device.createBuffer({ size: 16, usage: 0x80 | 0x4 | 0x8 }); // STORAGE | COPY_SRC | COPY_DST
    this.#evalStats = device.createBuffer({ size: 16, usage: 0x80 | 0x4 | 0x8 });
    device.queue.writeBuffer(this.#g.params, 0, params);
  }

  static async create(device: GPUDevice, options: TrainerOptions): Promise<ViTTrainer> {
    dims(options.config);
    const o = new OptionChecker('ViTTrainer.create options', options, [
      'config',
      'batchSize',
      'train',
      'seed',
      'matmul',
      'matmulTile',
      'params',
    ]);
    o.integer('batchSize', 0, 1, 65536);
    if (options.seed !== undefined) o.integer('seed', 0, -0x80000000, 0xffffffff);
    if (options.matmul !== undefined) o.oneOf('matmul', 'auto', ['auto', 'direct', 'tiled']);
    const { matmul, matmulTile, config } = options;
    const kernels = await Kernels.create(device, {
      ...(matmul ? { matmul } : {}),
      ...(matmulTile ? { matmulTile } : {}),
      gelu: config.gelu ?? 'tanh',
      layerNormEps: layerNormEps(config),
    });
    return new ViTTrainer(device, kernels, options);
  }

  /** Input sizes: images f32 [B, C, S, S] (NCHW, normalised) and labels i32 [B]. */
  get imageBytes(): number {
    const c = this.config;
    return this.batchSize * c.channels * c.imageSize * c.imageSize * 4;
  }

  /** Records one training step (forward, backward, AdamW) on `encoder`. */
  step(encoder: GPUCommandEncoder, images: GPUBuffer, labels: GPUBuffer, batchSize = this.batchSize): void {
    if (batchSize !== this.batchSize)
      throw new RangeError(`vit: trainer built for batches of ${this.batchSize}, got ${batchSize} (pad with label -1)`);
    encoder.clearBuffer(this.#g.dx);
    const pass = encoder.beginComputePass({ label: 'vit step' });
    recordOne(pass, this.#patchDispatch(images));
    record(pass, this.#g.forward);
    recordOne(pass, this.#lossDispatch(labels, this.#loss, this.#stats));
    record(pass, this.#g.backward);
    pass.end();
  }

  /**
   * Mean loss and accuracy accumulated on the GPU since the last call, then reset. Submits a tiny
   * copy and resolves when the GPU reaches it; keep submitting steps meanwhile (call it every N).
   */
  async readLoss(): Promise<LossReport> {
    const [stats, state] = await this.#readSmall(this.#stats, true);
    const samples = stats[1]!;
    return {
      loss: samples ? stats[0]! / samples : NaN,
      accuracy: samples ? stats[2]! / samples : NaN,
      samples,
      steps: stats[3]!,
      step: state[0]!,
      lr: state[1]!,
      gradNorm: state[5]!,
    };
  }

  /** Accuracy and mean loss over held-out batches (forward only; parameters untouched). */
  async evaluate(batches: Iterable<Batch> | AsyncIterable<Batch>): Promise<{ accuracy: number; loss: number; samples: number }> {
    const enc = this.#device.createCommandEncoder();
    enc.clearBuffer(this.#evalStats);
    this.#device.queue.submit([enc.finish()]);
    for await (const batch of batches) {
      const encoder = this.#device.createCommandEncoder();
      const pass = encoder.beginComputePass({ label: 'vit eval' });
      recordOne(pass, this.#patchDispatch(batch.images));
      record(pass, this.#g.forward);
      recordOne(pass, this.#lossDispatch(batch.labels, this.#evalLoss, this.#evalStats));
      pass.end();
      this.#device.queue.submit([encoder.finish()]);
    }
    const [stats] = await this.#readSmall(this.#evalStats, false);
    const samples = stats[1]!;
    return { accuracy: samples ? stats[2]! / samples : NaN, loss: samples ? stats[0]! / samples : NaN, samples };
  }

  /**
   * Logits [batchSize, classes] of one batch of images (forward only; parameters untouched), read
   * back to the CPU: for inference and checks, not for the training loop.
   */
  async predict(images: GPUBuffer): Promise<Float32Array> {
    const encoder = this.#device.createCommandEncoder();
    const pass = encoder.beginComputePass({ label: 'vit predict' });
    recordOne(pass, this.#patchDispatch(images));
    record(pass, this.#g.forward);
    pass.end();
    this.#device.queue.submit([encoder.finish()]);
    const logits = new Float32Array(await readBuffer(this.#device, this.#g.logits));
    return logits.slice(0, this.batchSize * this.config.classes);
  }

  async readParams(): Promise<Float32Array> {
    return new Float32Array(await readBuffer(this.#device, this.#g.params));
  }

  /** Gradients of the last step (before clipping), in the flat layout. */
  async readGrads(): Promise<Float32Array> {
    return new Float32Array(await readBuffer(this.#device, this.#g.grads));
  }

  /** Weights, AdamW moments and step/schedule state in one self-describing byte array. */
  saveCheckpoint(): Promise<Uint8Array> {
    const header = { format: 'tandem-vit', version: 1, config: this.config, train: this.train, size: this.layout.size } as const;
    return saveTrainer(this.#device, MAGIC, header, this.#checkpointed());
  }

  /** Restores a checkpoint from saveCheckpoint; the model shape must match this trainer's (WeightsError otherwise). */
  loadCheckpoint(bytes: Uint8Array): void {
    loadTrainer(this.#device, bytes, MAGIC, { format: 'tandem-vit', config: this.config, size: this.layout.size }, this.#checkpointed());
  }

  /** Frees the trainer's GPU buffers (parameters, activations, optimizer state). */
  close(): void {
    this.destroy();
  }

  [Symbol.dispose](): void {
    this.destroy();
  }

  /** @deprecated The same as close(), which every Tandem resource has; use close(). */
  destroy(): void {
    for (const b of [...this.#g.buffers, this.#stats, this.#evalStats, ...this.#staging]) b.destroy();
    this.#kernels.destroy();
  }

  #checkpointed(): GPUBuffer[] {
    return [this.#g.params, this.#g.m, this.#g.v, this.#g.state];
  }

  #patchDispatch(images: GPUBuffer): Dispatch {
    let d = this.#patchify.get(images);
    if (!d) {
      if (images.size < this.imageBytes)
        throw new RangeError(`vit: images buffer holds ${images.size} bytes, a batch needs ${this.imageBytes}`);
      const c = this.config;
      d = this.#kernels.patchify(images, this.#g.patches, this.batchSize, c.channels, c.imageSize, c.patchSize);
      this.#patchify.set(images, d);
    }
    return d;
  }

  #lossDispatch(labels: GPUBuffer, cache: WeakMap<GPUBuffer, Dispatch>, stats: GPUBuffer): Dispatch {
    let d = cache.get(labels);
    if (!d) {
      if (labels.size < this.batchSize * 4)
        throw new RangeError(`vit: labels buffer holds ${labels.size} bytes, needs ${this.batchSize * 4}`);
      d = this.#kernels.crossEntropy(this.#g.logits, labels, this.#g.dlogits, stats, this.batchSize, this.config.classes);
      cache.set(labels, d);
    }
    return d;
  }

  /** Copies stats (then clears them when asked) and the optimizer state via a reused staging buffer. */
  async #readSmall(stats: GPUBuffer, reset: boolean): Promise<[Float32Array, Float32Array]> {
    const staging =
      this.#staging.pop() ?? this.#device.createBuffer({ size: 48, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = this.#device.createCommandEncoder();
    encoder.copyBufferToBuffer(stats, 0, staging, 0, 16);
    encoder.copyBufferToBuffer(this.#g.state, 0, staging, 16, 32);
    if (reset) encoder.clearBuffer(stats);
    this.#device.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const all = new Float32Array(staging.getMappedRange().slice(0));
    staging.unmap();
    this.#staging.push(staging);
    return [all.subarray(0, 4), all.subarray(4, 12)];
  }
}
