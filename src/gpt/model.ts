// GptTrainer: a decoder-only transformer trained entirely in WGSL (the ViT's kernels, as a decoder's:
// causal attention within documents, the loss over labelled positions) on packed token batches. `step`
// copies the batch into the graph's buffers and records forward, loss, backward and AdamW into the
// caller's command encoder; the loss is summed on the GPU and read back only when asked.
import { OptionChecker, OptionError } from '../errors/index.ts';
import { readBuffer } from '../gpu/index.ts';
import { defaultTrain, type ParamLayout, type TrainConfig } from '../vit/index.ts';
import { type Dispatch, Kernels, loadTrainer, optimValues, record, recordOne, saveTrainer } from '../vit/internal.ts';
import { type CompleteOptions, Generator } from './complete.ts';
import { type GptConfig, gptDims, gptParamLayout, initGptParams } from './config.ts';
import { buildGptGraph, type GptGraph } from './graph.ts';

/**
 * A packed token batch on the trainer's device, each buffer i32 × batchSize × context with
 * COPY_SRC usage (the text loader's TokenDeviceBatch is one): `labels` −1 where nothing is
 * predicted, `docIds` −1 on padding, `positions` the position within each document.
 */
export interface GptBatch {
  readonly inputs: GPUBuffer;
  readonly labels: GPUBuffer;
  readonly docIds: GPUBuffer;
  readonly positions: GPUBuffer;
  /** `[batchSize, context]` when the batch says. */
  readonly shape?: readonly [number, number];
}

export interface GptTrainerOptions {
  config: GptConfig;
  /** Rows per batch; each row holds `config.context` positions. */
  batchSize: number;
  train?: Partial<TrainConfig>;
  seed?: number;
  /** Initial parameters in the flat layout (else seeded init). */
  params?: Float32Array<ArrayBuffer>;
  /** The ViT's matmul kernel choice ('auto': direct on CPU adapters). */
  matmul?: 'auto' | 'direct' | 'tiled';
}

export interface GptLossReport {
  /** Mean next-token loss and accuracy over the labelled positions since the previous report. */
  loss: number;
  accuracy: number;
  tokens: number;
  steps: number;
  /** Optimizer state after the last step: step count, learning rate, global gradient norm. */
  step: number;
  lr: number;
  gradNorm: number;
}

export interface GptEvalReport {
  /** Mean loss and accuracy over the labelled positions of the batches evaluated since the last report. */
  loss: number;
  accuracy: number;
  tokens: number;
  batches: number;
}

/** loss.wgsl's sums: loss, labelled positions, correct predictions, batches. */
type Sums = [number, number, number, number];
/** optim.wgsl's state: step, lr, bias corrections, clip scale, gradient norm. */
type OptimizerState = [number, number, number, number, number, number];

const MAGIC = 0x54475054; // "TGPT"
const COPY_SRC = 0x4;
const USAGE = 0x80 | COPY_SRC | 0x8; // STORAGE | COPY_SRC | COPY_DST
const WHERE = 'GptTrainer.create options';

export class GptTrainer {
  readonly config: GptConfig;
  readonly batchSize: number;
  readonly train: TrainConfig;
  readonly layout: ParamLayout;
  readonly #device: GPUDevice;
  readonly #kernels: Kernels;
  readonly #g: GptGraph;
  readonly #grads: GPUBuffer;
  /** AdamW moments and the optimizer's state (step, lr, corrections, clip scale, norm). */
  readonly #m: GPUBuffer;
  readonly #v: GPUBuffer;
  readonly #state: GPUBuffer;
  readonly #owned: GPUBuffer[];
  readonly #stats: GPUBuffer;
  readonly #evalStats: GPUBuffer;
  readonly #loss: Dispatch;
  readonly #evalLoss: Dispatch;
  readonly #staging: GPUBuffer[] = [];
  #generator: Generator | undefined;

  private constructor(device: GPUDevice, kernels: Kernels, o: GptTrainerOptions, initial: Float32Array<ArrayBuffer>) {
    this.#device = device;
    this.#kernels = kernels;
    this.config = { ...o.config };
    this.batchSize = o.batchSize;
    this.train = { ...defaultTrain, ...o.train };
    this.layout = gptParamLayout(this.config);
    const n = this.layout.size;
    const make = (elements: number) => device.createBuffer({ size: Math.max(16, elements * 4), usage: USAGE });
    const [params, grads, m, v, state, partial] = [make(n), make(n), make(n), make(n), make(8), make(256)];
    [this.#grads, this.#m, this.#v, this.#state] = [grads, m, v, state];
    [this.#stats, this.#evalStats] = [make(4), make(4)];
    this.#owned = [params, grads, m, v, state, partial, this.#stats, this.#evalStats];
    const optimizer = kernels.optimizer(optimValues(n, this.layout.decayEnd, this.train), n, { grads, partial, state, w: params, m, v });
    this.#g = buildGptGraph(device, kernels, this.config, o.batchSize, { params, training: { grads, optimizer } });
    const { logits, labels, dlogits, rows } = this.#g;
    this.#loss = kernels.crossEntropy(logits, labels, dlogits, this.#stats, rows, this.config.vocabSize);
    this.#evalLoss = kernels.crossEntropy(logits, labels, dlogits, this.#evalStats, rows, this.config.vocabSize);
    device.queue.writeBuffer(params, 0, initial);
  }

  static async create(device: GPUDevice, options: GptTrainerOptions): Promise<GptTrainer> {
    const o = new OptionChecker(WHERE, options, ['config', 'batchSize', 'train', 'seed', 'params', 'matmul']);
    if (typeof options.config !== 'object' || options.config === null) o.fail('config', 'a GptConfig');
    gptDims(options.config, `${WHERE}.config`);
    o.integer('batchSize', 0, 1, 65536);
    if (options.seed !== undefined) o.integer('seed', 0, -0x80000000, 0xffffffff);
    if (options.matmul !== undefined) o.oneOf('matmul', 'auto', ['auto', 'direct', 'tiled']);
    const size = gptParamLayout(options.config).size;
    if (options.params !== undefined && (!(options.params instanceof Float32Array) || options.params.length !== size))
      o.fail('params', `a Float32Array of ${size} parameters (the layout of this config)`);
    const initial = options.params ?? initGptParams(options.config, options.seed ?? 1);
    const kernels = await Kernels.create(device, { matmul: options.matmul ?? 'auto', gelu: 'tanh', layerNormEps: 1e-5, decoder: true });
    return new GptTrainer(device, kernels, options, initial);
  }

  /** Records one training step (batch copy, forward, loss, backward, AdamW) on `encoder`. */
  step(encoder: GPUCommandEncoder, batch: GptBatch): void {
    this.#copyIn(encoder, batch, 'GptTrainer.step');
    const pass = encoder.beginComputePass({ label: 'gpt step' });
    record(pass, this.#g.forward);
    recordOne(pass, this.#loss);
    record(pass, this.#g.backward);
    pass.end();
  }

  /** Records a forward pass and its loss into the evaluation sums (parameters untouched). */
  evaluate(encoder: GPUCommandEncoder, batch: GptBatch): void {
    this.#copyIn(encoder, batch, 'GptTrainer.evaluate');
    const pass = encoder.beginComputePass({ label: 'gpt eval' });
    record(pass, this.#g.forward);
    recordOne(pass, this.#evalLoss);
    pass.end();
  }

  /** Mean loss and accuracy of the training steps since the last report, then reset (the ViT trainer's verb). */
  async readLoss(): Promise<GptLossReport> {
    const [[lossSum, tokens, correct, steps], [step, lr, , , , gradNorm]] = await this.#readSmall(this.#stats);
    return { loss: tokens ? lossSum / tokens : NaN, accuracy: tokens ? correct / tokens : NaN, tokens, steps, step, lr, gradNorm };
  }

  /** Mean loss and accuracy of the batches evaluated since the last report, then reset. */
  async evalReport(): Promise<GptEvalReport> {
    const [[lossSum, tokens, correct, batches]] = await this.#readSmall(this.#evalStats);
    return { loss: tokens ? lossSum / tokens : NaN, accuracy: tokens ? correct / tokens : NaN, tokens, batches };
  }

  /** The parameters in the flat layout (`layout`). */
  async readParams(): Promise<Float32Array> {
    return new Float32Array(await readBuffer(this.#device, this.#g.params));
  }

  /** The last step's gradients (before clipping), in the flat layout. */
  async readGrads(): Promise<Float32Array> {
    return new Float32Array(await readBuffer(this.#device, this.#grads));
  }

  /** @deprecated use readLoss() (the ViT trainer's verb too) */
  lossReport(): Promise<GptLossReport> {
    return this.readLoss();
  }

  /** @deprecated use readParams() (the ViT trainer's verb too) */
  params(): Promise<Float32Array> {
    return this.readParams();
  }

  /** @deprecated use readGrads() (the ViT trainer's verb too) */
  gradients(): Promise<Float32Array> {
    return this.readGrads();
  }

  /** Logits [batchSize · context, vocabSize] of the last forward pass (for checks, not training). */
  async logits(): Promise<Float32Array> {
    const n = this.#g.rows * this.config.vocabSize;
    return new Float32Array(await readBuffer(this.#device, this.#g.logits, n * 4));
  }

  /**
   * `count` tokens continuing `promptIds` (the last `context` of them are seen), one forward pass
   * of a one-row graph per token; only the last position's logits are read back. Greedy at
   * temperature 0 (the default), else sampled from softmax(logits / temperature), seeded.
   */
  async complete(promptIds: readonly number[], count: number, options: CompleteOptions = {}): Promise<number[]> {
    this.#generator ??= new Generator(this.#device, buildGptGraph(this.#device, this.#kernels, this.config, 1, { params: this.#g.params }));
    return this.#generator.complete(promptIds, count, options);
  }

  /** Weights, AdamW moments and the optimizer's step in one self-describing byte array. */
  saveCheckpoint(): Promise<Uint8Array> {
    const header = { format: 'tandem-gpt', version: 1, config: this.config, train: this.train, size: this.layout.size } as const;
    return saveTrainer(this.#device, MAGIC, header, this.#checkpointed());
  }

  /** Restores a checkpoint of a trainer with the same config (WeightsError otherwise). */
  loadCheckpoint(bytes: Uint8Array): void {
    loadTrainer(this.#device, bytes, MAGIC, { format: 'tandem-gpt', config: this.config, size: this.layout.size }, this.#checkpointed());
  }

  /** @deprecated use saveCheckpoint() (the ViT's verb too) */
  checkpoint(): Promise<Uint8Array> {
    return this.saveCheckpoint();
  }

  /** @deprecated use loadCheckpoint() (the ViT's verb too) */
  restore(bytes: Uint8Array): void {
    this.loadCheckpoint(bytes);
  }

  /** Frees the trainer's GPU buffers and kernels' uniforms. */
  close(): void {
    for (const b of [...this.#owned, ...this.#g.buffers, ...this.#staging]) b.destroy();
    this.#staging.length = 0;
    this.#generator?.close();
    this.#kernels.destroy();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  #checkpointed(): GPUBuffer[] {
    return [this.#g.params, this.#m, this.#v, this.#state];
  }

  #copyIn(encoder: GPUCommandEncoder, batch: GptBatch, where: string): void {
    const bytes = this.#g.rows * 4;
    const { shape } = batch;
    if (shape && (shape[0] !== this.batchSize || shape[1] !== this.config.context))
      throw new OptionError(where, 'batch.shape', shape, `[${this.batchSize}, ${this.config.context}] (batchSize, context)`);
    const g = this.#g;
    for (const [field, target] of [
      ['inputs', g.inputs],
      ['labels', g.labels],
      ['docIds', g.docIds],
      ['positions', g.positions],
    ] as const) {
      const source = batch[field];
      if (!source || typeof source.size !== 'number' || source.size < bytes || (source.usage & COPY_SRC) === 0)
        throw new OptionError(
          where,
          `batch.${field}`,
          source,
          `a COPY_SRC GPUBuffer of at least ${bytes} bytes (i32 × ${this.batchSize} × ${this.config.context})`,
        );
      encoder.copyBufferToBuffer(source, 0, target, 0, bytes);
    }
  }

  /** Copies stats (then clears them) and the optimizer state through a reused staging buffer. */
  async #readSmall(stats: GPUBuffer): Promise<[Sums, OptimizerState]> {
    const staging =
      this.#staging.pop() ?? this.#device.createBuffer({ size: 48, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = this.#device.createCommandEncoder();
    encoder.copyBufferToBuffer(stats, 0, staging, 0, 16);
    encoder.copyBufferToBuffer(this.#state, 0, staging, 16, 32);
    encoder.clearBuffer(stats);
    this.#device.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const all = new Float32Array(staging.getMappedRange().slice(0));
    staging.unmap();
    this.#staging.push(staging);
    const [lossSum = 0, count = 0, correct = 0, batches = 0, step = 0, lr = 0, bc1 = 0, bc2 = 0, clip = 0, norm = 0] = all;
    return [
      [lossSum, count, correct, batches],
      [step, lr, bc1, bc2, clip, norm],
    ];
  }
}
