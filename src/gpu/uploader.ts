import { FeedError } from './feed-error.ts';
import { OptionChecker } from '../errors/index.ts';
import { writeBufferTakesSharedMemory } from '../runtime/index.ts';
import { align4 } from './dispatch.ts';
import { leasedBatch, SlotPool } from '../sync/index.ts';

/** What the uploader needs of a CPU batch (an ImageBatch from src/decode satisfies it). */
export interface HostBatch {
  readonly sequence: number;
  readonly count: number;
  readonly shape: readonly [number, number, number, number];
  readonly data: Uint8Array;
  readonly labels: Int32Array;
  /** Each row's key, when the batch carries them (ImageBatch does). */
  readonly keys?: readonly string[];
  release(): void;
}

/** A batch on the GPU: u8 NHWC bytes in `buffer` (storage binding), plus its labels and keys. */
export interface GpuBatch {
  readonly sequence: number;
  readonly count: number;
  readonly shape: readonly [number, number, number, number];
  readonly dtype: 'uint8';
  readonly layout: 'NHWC';
  readonly byteLength: number;
  /** The device buffer; throws after release(). */
  readonly buffer: GPUBuffer;
  readonly labels: Int32Array;
  /** The rows' keys (empty when the host batch had none). */
  readonly keys: readonly string[];
  /** Call after submitting the commands that read `buffer`: the slot may then be refilled. */
  release(): void;
  [Symbol.dispose](): void;
}

export type UploadMethod = 'write-buffer' | 'staging';

export interface UploaderOptions {
  /** Largest batch in bytes. */
  maxBatchBytes: number;
  /** Device buffers in the ring (K ≥ 2; default 2: double buffering). */
  slots?: number;
  method?: UploadMethod;
  /** Extra usages for the device buffers (STORAGE | COPY_DST are always set). */
  usage?: GPUBufferUsageFlags;
}

interface Slot {
  device: GPUBuffer;
  staging: GPUBuffer | undefined;
  /** Resolves when the staging buffer is mapped again after its last copy. */
  stagingReady: Promise<void>;
}

/**
 * Moves batches from shared wasm memory into a ring of device buffers.
 *
 * Why a slot is never overwritten while the GPU may read it: a slot returns to the free list only
 * when the consumer calls release(), which it does after submitting the commands that read it. The
 * next upload into that slot is a queue operation (writeBuffer, or a copy in a later submit), and
 * the queue runs operations in submission order, so the overwrite happens after those reads. The
 * staging method also waits for mapAsync, which resolves only once the GPU is done with the
 * previous copy out of that staging buffer.
 */
export class BatchUploader {
  readonly method: UploadMethod;
  readonly slotCount: number;
  #device: GPUDevice;
  /** The ring: each slot a device buffer (and its staging buffer), lent to one uploaded batch. */
  #slots: SlotPool<Slot>;
  #closed = false;
  /** A reusable non-shared copy for runtimes whose writeBuffer refuses shared memory (dawn.node). */
  #bounce: Uint8Array<ArrayBuffer> | undefined;
  readonly writesSharedMemory: boolean;
  uploaded = 0;
  bytesUploaded = 0;

  constructor(device: GPUDevice, options: UploaderOptions) {
    const o = new OptionChecker('BatchUploader options', options, ['maxBatchBytes', 'slots', 'method', 'usage']);
    o.integer('maxBatchBytes', 0, 1, 2 ** 40);
    this.#device = device;
    this.method = o.oneOf('method', 'write-buffer', ['write-buffer', 'staging']);
    this.slotCount = o.integer('slots', 2, 2, 64);
    o.optionalInteger('usage', 0, 0xffff);
    const size = align4(options.maxBatchBytes);
    this.writesSharedMemory = this.method === 'write-buffer' && writeBufferTakesSharedMemory;
    if (this.method === 'write-buffer' && !this.writesSharedMemory) this.#bounce = new Uint8Array(size);
    const slots: Slot[] = [];
    for (let i = 0; i < this.slotCount; i++) {
      slots.push({
        device: device.createBuffer({
          size,
          usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC | (options.usage ?? 0),
          label: `tandem batch slot ${i}`,
        }),
        staging:
          this.method === 'staging'
            ? device.createBuffer({
                size,
                usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC,
                mappedAtCreation: true,
                label: `tandem staging ${i}`,
              })
            : undefined,
        stagingReady: Promise.resolve(),
      });
    }
    this.#slots = new SlotPool(slots);
  }

  /**
   * Uploads `batch`, releases it back to its CPU pool, and returns the GPU handle. Waiting for a
   * free slot ends with the signal's reason when `signal` aborts (pass the stage's signal).
   */
  async upload(batch: HostBatch, signal?: AbortSignal, waits?: { waitFor<T>(wait: Promise<T>): Promise<T> }): Promise<GpuBatch> {
    try {
      if (this.#closed) throw new FeedError('closed', 'uploader is closed');
      // The wait for a free slot goes to the stage's statistics as a resource wait (pass the stage's context as `waits`).
      const slot = this.#slots.tryAcquire() ?? (await (waits ? waits.waitFor(this.#slots.acquire(signal)) : this.#slots.acquire(signal)));
      try {
        const bytes = align4(batch.data.byteLength);
        if (bytes > slot.device.size) throw new RangeError(`batch of ${bytes} bytes exceeds the slot size ${slot.device.size}`);
        const labels = batch.labels.slice();
        const keys = batch.keys ? batch.keys.slice(0, batch.count) : [];
        await this.#copy(slot, batch, bytes);
        this.uploaded++;
        this.bytesUploaded += bytes;
        return this.#handle(slot, batch, labels, keys, bytes);
      } catch (error) {
        this.#slots.release(slot);
        throw error;
      }
    } finally {
      batch.release(); // writeBuffer and the staging copy have both taken the bytes by now
    }
  }

  async #copy(slot: Slot, batch: HostBatch, bytes: number): Promise<void> {
    // The view may end short of a word; widen it over the (allocated, 4-byte-rounded) batch buffer.
    const view = new Uint8Array(batch.data.buffer, batch.data.byteOffset, bytes);
    if (slot.staging) {
      await slot.stagingReady;
      new Uint8Array(slot.staging.getMappedRange(0, bytes)).set(view);
      slot.staging.unmap();
      const encoder = this.#device.createCommandEncoder();
      encoder.copyBufferToBuffer(slot.staging, 0, slot.device, 0, bytes);
      this.#device.queue.submit([encoder.finish()]);
      const staging = slot.staging;
      slot.stagingReady = staging.mapAsync(GPUMapMode.WRITE);
    } else if (this.#bounce) {
      this.#bounce.set(view);
      this.#device.queue.writeBuffer(slot.device, 0, this.#bounce, 0, bytes);
    } else {
      // WebGPU takes AllowSharedBufferSource here; @webgpu/types narrows it to ArrayBuffer views.
      this.#device.queue.writeBuffer(slot.device, 0, view as Uint8Array<ArrayBuffer>);
    }
  }

  /** Slots not held by an uploaded batch (all of them once every GpuBatch is released). */
  get freeSlots(): number {
    return this.#slots.available;
  }

  /** `await using`: close() at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Destroys the ring; waits for pending staging maps so nothing stays mapped. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled(this.#slots.slots.map((s) => s.stagingReady));
    for (const s of this.#slots.slots) {
      s.staging?.destroy();
      s.device.destroy();
    }
  }

  #handle(slot: Slot, batch: HostBatch, labels: Int32Array, keys: readonly string[], bytes: number): GpuBatch {
    const { sequence, count, shape } = batch;
    const plain = { sequence, count, shape, dtype: 'uint8', layout: 'NHWC', byteLength: bytes, labels, keys } as const;
    return leasedBatch(`GPU batch ${sequence}`, () => this.#slots.release(slot), { buffer: slot.device }, plain);
  }
}
