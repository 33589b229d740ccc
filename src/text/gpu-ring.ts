// The text loader's GPU end: a packed batch's four i32 arrays go up in one write through the upload
// ring (BatchUploader, the image loader's), are copied on the GPU into one of the ring's buffer
// sets, and are handed out as a TokenDeviceBatch. A set is refilled only after its batch is
// released: the refill is a later queue operation, so it cannot overtake the consumer's commands.
import { BatchReleasedError } from '../errors/index.ts';
import { BatchUploader, type GpuContext } from '../gpu/index.ts';
import type { StageContext } from '../pipeline/index.ts';
import { SlotPool } from '../sync/index.ts';
import type { PackedBatch } from './batches.ts';
import type { TokenDeviceBatch } from './types.ts';

interface DeviceSet {
  inputs: GPUBuffer;
  labels: GPUBuffer;
  docIds: GPUBuffer;
  positions: GPUBuffer;
}

/** A device batch with the packer's position after it (for the loader's state). */
export type PackedDeviceBatch = TokenDeviceBatch & { readonly snapshot: PackedBatch['snapshot'] };

const FIELDS = ['inputs', 'labels', 'docIds', 'positions'] as const;

export class TokenRing {
  readonly #device: GPUDevice;
  readonly #uploader: BatchUploader;
  readonly #sets: SlotPool<DeviceSet>;
  readonly #bytes: number;
  readonly #shape: readonly [number, number];
  #closed = false;

  constructor(gpu: GpuContext, batchSize: number, seqLen: number, slots = 4) {
    this.#device = gpu.device;
    this.#bytes = batchSize * seqLen * 4;
    this.#shape = [batchSize, seqLen];
    this.#uploader = new BatchUploader(gpu.device, { maxBatchBytes: 4 * this.#bytes, slots: 2, usage: GPUBufferUsage.COPY_SRC });
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const make = (i: number, name: string) => gpu.device.createBuffer({ size: this.#bytes, usage, label: `tandem text ${name} ${i}` });
    this.#sets = new SlotPool(
      Array.from({ length: slots }, (_, i) => ({
        inputs: make(i, 'inputs'),
        labels: make(i, 'labels'),
        docIds: make(i, 'docIds'),
        positions: make(i, 'positions'),
      })),
    );
  }

  /** Buffer sets lent to batches not yet released. */
  get held(): number {
    return this.#sets.size - this.#sets.available;
  }

  /** The pipeline stage: upload, copy into a free set, submit; the CPU batch is released once uploaded. */
  async convert(batch: PackedBatch, ctx: StageContext): Promise<PackedDeviceBatch> {
    let set: DeviceSet;
    try {
      set = this.#sets.tryAcquire() ?? (await ctx.waitFor(this.#sets.acquire(ctx.signal)));
    } catch (error) {
      batch.release();
      throw error;
    }
    try {
      const { count, padding, keys, snapshot } = batch;
      const whole = batch.whole;
      const host = {
        sequence: 0,
        count,
        shape: [4, this.#shape[0], this.#shape[1], 4] as [number, number, number, number],
        data: new Uint8Array(whole.buffer, whole.byteOffset, whole.byteLength),
        labels: EMPTY_LABELS,
        release: () => batch.release(),
      };
      const up = await this.#uploader.upload(host, ctx.signal, ctx);
      try {
        const encoder = this.#device.createCommandEncoder({ label: 'tandem text batch' });
        for (const [i, field] of FIELDS.entries()) encoder.copyBufferToBuffer(up.buffer, i * this.#bytes, set[field], 0, this.#bytes);
        this.#device.queue.submit([encoder.finish()]);
      } finally {
        up.release();
      }
      return this.#handle(set, count, padding, keys, snapshot);
    } catch (error) {
      this.#sets.release(set);
      throw error;
    }
  }

  #handle(set: DeviceSet, count: number, padding: number, keys: readonly string[], snapshot: PackedBatch['snapshot']): PackedDeviceBatch {
    let released = false;
    const guard = (buffer: GPUBuffer) => {
      if (released) throw new BatchReleasedError('a text batch was used after release()');
      return buffer;
    };
    return {
      get inputs() {
        return guard(set.inputs);
      },
      get labels() {
        return guard(set.labels);
      },
      get docIds() {
        return guard(set.docIds);
      },
      get positions() {
        return guard(set.positions);
      },
      count,
      shape: this.#shape,
      padding,
      keys,
      snapshot,
      release: () => {
        if (released) throw new BatchReleasedError('a text batch was released twice');
        released = true;
        if (!this.#closed) this.#sets.release(set);
      },
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#uploader.close();
    for (const set of this.#sets.slots) for (const field of FIELDS) set[field].destroy();
  }
}

const EMPTY_LABELS = new Int32Array(0);
