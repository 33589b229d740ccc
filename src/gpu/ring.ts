// The one GPU ring behind every loader's `to: gpu` (normalised images, token sets): a host batch
// goes up through the upload ring, the caller's commands turn it into one of the ring's buffer
// sets, and the set is handed out as a batch until release(). A set is refilled only after its
// batch is released: the refill is a later queue operation, so it cannot overtake the commands
// the consumer submitted before releasing.
import { leasedBatch, SlotPool, type BatchEnds } from '../sync/index.ts';
import { BatchUploader, type GpuBatch, type HostBatch } from './uploader.ts';

/** One buffer set: a GPUBuffer by name (the batch's field of the same name). */
export type BufferSet<F extends string> = { readonly [K in F]: GPUBuffer };

/** A batch in one of the ring's sets: each buffer read through the lease, plus what `encode` returned. */
export type RingBatch<F extends string, Extra> = BufferSet<F> & Extra & BatchEnds;

export interface DeviceRingOptions<F extends string> {
  /** Each buffer of a set: its size in bytes, by name. */
  buffers: Record<F, number>;
  /** Sets in the ring: the batches that may be out at once. */
  sets: number;
  /** The largest host batch in bytes (an upload slot). */
  maxBatchBytes: number;
  /** Names the buffers, the command buffers and the batch in errors. */
  label: string;
}

/** The stage's signal, and its waitFor, which counts the wait for a free set as a resource wait. */
export interface RingWaits {
  readonly signal: AbortSignal;
  waitFor<T>(wait: Promise<T>): Promise<T>;
}

export class DeviceRing<F extends string> {
  readonly #device: GPUDevice;
  readonly #uploader: BatchUploader;
  readonly #sets: SlotPool<BufferSet<F>>;
  readonly #label: string;
  #closed = false;

  constructor(device: GPUDevice, o: DeviceRingOptions<F>) {
    this.#device = device;
    this.#label = o.label;
    this.#uploader = new BatchUploader(device, { maxBatchBytes: o.maxBatchBytes, slots: 2 });
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const sizes = Object.entries(o.buffers) as [F, number][];
    const make = (i: number) =>
      Object.fromEntries(sizes.map(([name, size]) => [name, device.createBuffer({ size, usage, label: `${o.label} ${name} ${i}` })]));
    this.#sets = new SlotPool(Array.from({ length: o.sets }, (_, i) => make(i) as BufferSet<F>));
  }

  /** Sets lent to batches not yet released. */
  get held(): number {
    return this.#sets.size - this.#sets.available;
  }

  /**
   * The pipeline stage: waits for a free set, uploads `host` (released once uploaded, or when this
   * fails), records `encode`'s commands from the upload into the set and submits them. The batch
   * holds the set's buffers and what `encode` returned.
   */
  async convert<Extra extends object>(
    host: HostBatch,
    waits: RingWaits,
    encode: (encoder: GPUCommandEncoder, uploaded: GpuBatch, set: BufferSet<F>) => Extra,
  ): Promise<RingBatch<F, Extra>> {
    let set: BufferSet<F>;
    try {
      set = this.#sets.tryAcquire() ?? (await waits.waitFor(this.#sets.acquire(waits.signal)));
    } catch (error) {
      host.release();
      throw error;
    }
    try {
      const uploaded = await this.#uploader.upload(host, waits.signal, waits);
      let extra: Extra;
      try {
        const encoder = this.#device.createCommandEncoder({ label: this.#label });
        extra = encode(encoder, uploaded, set);
        this.#device.queue.submit([encoder.finish()]);
      } finally {
        uploaded.release(); // the commands that read the upload slot are submitted
      }
      const free = () => {
        if (!this.#closed) this.#sets.release(set);
      };
      return leasedBatch(`a ${this.#label} batch`, free, set, extra);
    } catch (error) {
      this.#sets.release(set);
      throw error;
    }
  }

  /** Destroys every buffer (after the upload ring's staging maps settle, so nothing stays mapped). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#uploader.close();
    for (const set of this.#sets.slots) for (const buffer of Object.values<GPUBuffer>(set)) buffer.destroy();
  }
}
