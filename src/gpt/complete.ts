// Generation with a forward-only one-row graph that shares the trainer's parameters: per new token
// the window (the last `context` ids) is written, the forward pass runs, and only the last
// position's logits come back, through one reused staging buffer.
import { OptionError } from '../errors/index.ts';
import { Rng } from '../random/index.ts';
import { record } from '../vit/internal.ts';
import type { GptGraph } from './graph.ts';

export interface CompleteOptions {
  /** 0 (the default): the most likely token each time; above 0: sampled from softmax(logits / temperature). */
  temperature?: number;
  /** The sampling stream's seed (default 1). */
  seed?: number;
}

const WHERE = 'GptTrainer.complete';
const MAX_TOKENS = 1 << 20;

export class Generator {
  readonly #device: GPUDevice;
  readonly #g: GptGraph;
  readonly #context: number;
  readonly #vocab: number;
  readonly #staging: GPUBuffer;
  readonly #inputs: Int32Array<ArrayBuffer>;
  readonly #docIds: Int32Array<ArrayBuffer>;
  readonly #probabilities: Float64Array;

  constructor(device: GPUDevice, graph: GptGraph) {
    this.#device = device;
    this.#g = graph;
    this.#context = graph.rows;
    this.#vocab = graph.logits.size / 4 / graph.rows;
    this.#staging = device.createBuffer({ size: this.#vocab * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    this.#inputs = new Int32Array(this.#context);
    this.#docIds = new Int32Array(this.#context);
    this.#probabilities = new Float64Array(this.#vocab);
    device.queue.writeBuffer(
      graph.positions,
      0,
      Int32Array.from({ length: this.#context }, (_, i) => i),
    );
    device.queue.writeBuffer(graph.labels, 0, new Int32Array(this.#context).fill(-1));
  }

  async complete(promptIds: readonly number[], count: number, options: CompleteOptions): Promise<number[]> {
    if (!Array.isArray(promptIds) || promptIds.length === 0 || promptIds.length > MAX_TOKENS)
      throw new OptionError(WHERE, 'promptIds', promptIds, `an array of 1 to ${MAX_TOKENS} token ids`);
    const bad = promptIds.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= this.#vocab);
    if (bad >= 0) throw new OptionError(WHERE, `promptIds[${bad}]`, promptIds[bad], `an integer in [0, ${this.#vocab - 1}]`);
    if (!Number.isInteger(count) || count < 0 || count > MAX_TOKENS)
      throw new OptionError(WHERE, 'count', count, `an integer in [0, ${MAX_TOKENS}]`);
    const temperature = options.temperature ?? 0;
    if (typeof temperature !== 'number' || !Number.isFinite(temperature) || temperature < 0)
      throw new OptionError(WHERE, 'temperature', temperature, 'a finite number ≥ 0');
    const seed = options.seed ?? 1;
    if (!Number.isInteger(seed)) throw new OptionError(WHERE, 'seed', seed, 'an integer');
    const rng = new Rng(seed);
    const sequence = [...promptIds];
    const out: number[] = [];
    for (let k = 0; k < count; k++) {
      const logits = await this.#lastLogits(sequence);
      const next = temperature === 0 ? argmax(logits) : this.#sample(logits, temperature, rng);
      sequence.push(next);
      out.push(next);
    }
    return out;
  }

  close(): void {
    this.#staging.destroy();
    for (const b of this.#g.buffers) b.destroy();
  }

  async #lastLogits(sequence: readonly number[]): Promise<Float32Array> {
    const n = Math.min(sequence.length, this.#context);
    const start = sequence.length - n;
    for (let i = 0; i < this.#context; i++) {
      this.#inputs[i] = i < n ? (sequence[start + i] ?? 0) : 0;
      this.#docIds[i] = i < n ? 0 : -1;
    }
    const queue = this.#device.queue;
    queue.writeBuffer(this.#g.inputs, 0, this.#inputs);
    queue.writeBuffer(this.#g.docIds, 0, this.#docIds);
    const encoder = this.#device.createCommandEncoder();
    const pass = encoder.beginComputePass({ label: 'gpt generate' });
    record(pass, this.#g.forward);
    pass.end();
    encoder.copyBufferToBuffer(this.#g.logits, (n - 1) * this.#vocab * 4, this.#staging, 0, this.#vocab * 4);
    queue.submit([encoder.finish()]);
    await this.#staging.mapAsync(GPUMapMode.READ);
    const logits = new Float32Array(this.#staging.getMappedRange().slice(0));
    this.#staging.unmap();
    return logits;
  }

  #sample(logits: Float32Array, temperature: number, rng: Rng): number {
    const max = logits[argmax(logits)] ?? 0;
    let sum = 0;
    logits.forEach((logit, k) => {
      sum += this.#probabilities[k] = Math.exp((logit - max) / temperature);
    });
    let u = rng.float() * sum;
    for (const [k, p] of this.#probabilities.entries()) {
      u -= p;
      if (u < 0) return k;
    }
    return logits.length - 1;
  }
}

function argmax(values: Float32Array): number {
  let best = 0;
  let bestValue = -Infinity;
  values.forEach((value, k) => {
    if (value > bestValue) [best, bestValue] = [k, value];
  });
  return best;
}
