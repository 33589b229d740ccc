// The training session's held-out set: the first batches of a held-out loader, read once on the CPU
// and kept in GPU buffers, so every evaluation measures the same tokens and reads no data.
import type { GptEvalReport, GptTrainer } from '../gpt/index.ts';
import type { TextLoader, TokenBatch } from '../text/index.ts';

const USAGE = 0x80 | 0x4 | 0x8; // STORAGE | COPY_SRC | COPY_DST

interface HeldOutBatch {
  inputs: GPUBuffer;
  labels: GPUBuffer;
  docIds: GPUBuffer;
  positions: GPUBuffer;
}

export class HeldOutSet {
  readonly #device: GPUDevice;
  readonly #batches: HeldOutBatch[];

  private constructor(device: GPUDevice, batches: HeldOutBatch[]) {
    this.#device = device;
    this.#batches = batches;
  }

  /** Up to `count` batches of `loader` (then closed); empty when it has none. */
  static async read(device: GPUDevice, loader: TextLoader<TokenBatch>, count: number): Promise<HeldOutSet> {
    const batches: HeldOutBatch[] = [];
    const upload = (values: Int32Array) => {
      const buffer = device.createBuffer({ size: values.byteLength, usage: USAGE });
      device.queue.writeBuffer(buffer, 0, values as Int32Array<ArrayBuffer>);
      return buffer;
    };
    try {
      for await (const b of loader) {
        batches.push({ inputs: upload(b.inputs), labels: upload(b.labels), docIds: upload(b.docIds), positions: upload(b.positions) });
        b.release();
        if (batches.length === count) break;
      }
    } catch (error) {
      new HeldOutSet(device, batches).close();
      throw error;
    } finally {
      await loader.close();
    }
    return new HeldOutSet(device, batches);
  }

  get size(): number {
    return this.#batches.length;
  }

  /** Mean loss and accuracy over every kept batch (the evaluation sums are the trainer's own). */
  async evaluate(trainer: GptTrainer): Promise<Pick<GptEvalReport, 'loss' | 'accuracy' | 'tokens'>> {
    if (this.#batches.length === 0) return { loss: NaN, accuracy: NaN, tokens: 0 };
    for (const batch of this.#batches) {
      // One submit per batch: each evaluation overwrites the graph's single set of input buffers.
      const encoder = this.#device.createCommandEncoder();
      trainer.evaluate(encoder, batch);
      this.#device.queue.submit([encoder.finish()]);
    }
    const r = await trainer.evalReport();
    return { loss: r.loss, accuracy: r.accuracy, tokens: r.tokens };
  }

  close(): void {
    for (const b of this.#batches) for (const buffer of [b.inputs, b.labels, b.docIds, b.positions]) buffer.destroy();
    this.#batches.length = 0;
  }
}
