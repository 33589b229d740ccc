// The batch-buffer engine under ImageBatcher and VideoClipBatcher: reusable buffers in the decode
// pool's memory, slots assigned in input order, a batch complete once every assigned slot has
// settled, failed slots filled by moving later rows down so batches stay dense. What fills a slot
// (an image, a clip) and what a finished batch looks like are the subclass's.
import type { DecodePool } from './pool.ts';
import { batchLease, SlotPool, type BatchLease } from '../sync/index.ts';

/** What the decode stage passes on: a settled slot, and whether it completed its batch. */
export interface SlotToken {
  readonly buffer: BatchBuffer;
  readonly completes: boolean;
}

/**
 * What a batch buffer is doing: being filled by the decode stage, handed out as a batch, or
 * nothing (given back; the SlotPool may already have lent it to a decode that has not resumed).
 * Whether it is free is the SlotPool's to know.
 */
type BufferUse = 'idle' | 'filling' | 'handed';

/** How many of a batcher's buffers are in each state. */
export interface ImageBatcherStats {
  buffers: number;
  free: number;
  filling: number;
  handed: number;
  /** Decodes waiting for a free buffer (the consumer holds them all, or they are being filled). */
  waiting: number;
}

export class BatchBuffer {
  use: BufferUse = 'idle';
  /** Filling when its pipeline stopped: goes back to the free list once its last slot settles. */
  orphaned = false;
  assigned = 0;
  settled = 0;
  failed: number[] = [];
  open = true;
  sequence = 0;
  readonly labels: Int32Array;
  readonly keys: string[];
  /** Per-slot numbers that travel with a row when it moves (a clip's frame times), `stride` a slot. */
  readonly extra: Float64Array;
  constructor(
    readonly pointer: number,
    readonly slotBytes: number,
    capacity: number,
    readonly extraStride: number,
  ) {
    this.labels = new Int32Array(capacity);
    this.keys = new Array<string>(capacity).fill('');
    this.extra = new Float64Array(capacity * extraStride);
  }
}

/**
 * Where batch buffers live: wasm memory (WasmSlots) for CPU batches, GPU buffers for batches
 * decoded on the GPU. A handle names one buffer; `move` copies one slot's bytes over another's
 * (for dense batches) and must be ordered before anything that reads the batch afterwards.
 */
export interface SlotStorage {
  allocate(bytes: number): number;
  free(handle: number): void;
  move(handle: number, fromByte: number, toByte: number, bytes: number): void;
}

/** Batch buffers in the decode pool's memory; a handle is the buffer's byte offset. */
export class WasmSlots implements SlotStorage {
  constructor(readonly pool: DecodePool) {}
  allocate(bytes: number): number {
    return this.pool.malloc(bytes);
  }
  free(handle: number): void {
    this.pool.free(handle);
  }
  move(handle: number, fromByte: number, toByte: number, bytes: number): void {
    new Uint8Array(this.pool.memory.buffer).copyWithin(handle + toByte, handle + fromByte, handle + fromByte + bytes);
  }
  /**
   * A view of `bytes` at `pointer`, taken again when the memory's buffer changed: in the workers
   * mode a growth replaces the unshared buffer and detaches views of the old one (shared memory
   * keeps them valid).
   */
  view(pointer: number, bytes: number): () => Uint8Array {
    const memory = this.pool.memory;
    let data = new Uint8Array(memory.buffer, pointer, bytes);
    return () => {
      if (data.buffer !== memory.buffer) data = new Uint8Array(memory.buffer, pointer, bytes);
      return data;
    };
  }
}

/** What a finished batch is made from: the buffer, its dense row count, and its lease (guard, release). */
export interface FinishedBuffer extends BatchLease {
  readonly buffer: BatchBuffer;
  readonly count: number;
}

interface Labelled {
  label?: number;
  key?: string;
}

export abstract class SlotBatcher<Item extends Labelled, Batch> {
  readonly slotBytes: number;
  protected readonly storage: SlotStorage;
  readonly #batchSize: number;
  /** The batch buffers in wasm memory, lent to the batch being filled and to batches handed out. */
  #buffers: SlotPool<BatchBuffer>;
  #closed = false;
  #current: BatchBuffer | undefined;
  #assignChain: Promise<unknown> = Promise.resolve();
  #sequence = 0;

  protected constructor(storage: SlotStorage, slotBytes: number, batchSize: number, buffers: number, extraStride: number) {
    this.storage = storage;
    this.slotBytes = slotBytes;
    this.#batchSize = batchSize;
    // Rounded up to 4 bytes: GPU uploads copy whole words.
    const bytes = Math.ceil((slotBytes * batchSize) / 4) * 4;
    this.#buffers = new SlotPool(
      Array.from({ length: Math.max(2, buffers) }, () => new BatchBuffer(storage.allocate(bytes), slotBytes, batchSize, extraStride)),
    );
  }

  get batchBytes(): number {
    return this.slotBytes * this.#batchSize;
  }

  /** Decodes `item` into slot `index` of `buffer` (at byte `pointer` of wasm memory for WasmSlots); throws its typed error. */
  protected abstract fill(item: Item, pointer: number, buffer: BatchBuffer, index: number, signal?: AbortSignal): Promise<void>;

  /** The batch handed out for a finished buffer. */
  protected abstract describe(finished: FinishedBuffer): Batch;

  /**
   * Pipeline stage (async generator): decodes one item into the next slot and yields a token;
   * a failed item yields the token only if it completed its batch, then throws its error.
   * Waiting for a free batch buffer ends when the stage's signal aborts (the pipeline stopped).
   */
  readonly decodeStage = async function* (
    this: SlotBatcher<Item, Batch>,
    item: Item,
    ctx?: { signal?: AbortSignal; waitFor?<T>(wait: Promise<T>): Promise<T> },
  ): AsyncGenerator<SlotToken> {
    // Waiting for a free batch buffer is reported to the stage's statistics as a resource wait,
    // not as work: a stage held up by its consumer is not the bottleneck.
    const assigned = this.#assign(ctx?.signal);
    const { buffer, index } = await (ctx?.waitFor ? ctx.waitFor(assigned) : assigned);
    buffer.labels[index] = item.label ?? -1;
    buffer.keys[index] = item.key ?? '';
    let failure: unknown;
    try {
      await this.fill(item, buffer.pointer + index * this.slotBytes, buffer, index, ctx?.signal);
    } catch (error) {
      failure = error;
      buffer.failed.push(index);
    }
    buffer.settled++;
    const completes = !buffer.open && buffer.settled === buffer.assigned;
    if (buffer.orphaned) {
      // Its pipeline stopped (the aggregator abandoned it): nobody will take this token.
      if (completes) this.#recycle(buffer);
      return;
    }
    if (failure === undefined || completes) yield { buffer, completes };
    if (failure !== undefined) throw failure;
  }.bind(this);

  /**
   * The decode stage for `PipelineBuilder.batch(batcher, options)`, which puts this batcher's
   * aggregator right after it (the same function as decodeStage).
   */
  get stage(): typeof this.decodeStage {
    return this.decodeStage;
  }

  /** Aggregator for the stage after decodeStage: emits each batch once it is complete. */
  aggregator(): { push(token: SlotToken): Batch | undefined; flush(): Batch | undefined; abandon(): void } {
    return {
      push: (token) => (token.completes ? this.#finish(token.buffer) : undefined),
      abandon: () => this.#abandon(),
      flush: () => {
        // The pipeline drains the decode stage before flushing, so the open batch has settled.
        const open = this.#current;
        this.#current = undefined;
        if (!open || open.assigned === 0) {
          if (open) this.#recycle(open);
          return undefined;
        }
        open.open = false;
        return this.#finish(open);
      },
    };
  }

  stats(): ImageBatcherStats {
    const all = this.#closed ? [] : this.#buffers.slots;
    const lent = (use: BufferUse) => all.filter((b) => b.use === use).length;
    const free = this.#closed ? 0 : this.#buffers.available;
    return {
      buffers: all.length,
      free,
      filling: lent('filling'),
      handed: lent('handed'),
      waiting: this.#closed ? 0 : this.#buffers.waiting,
    };
  }

  /**
   * The pipeline stopped with batches part-filled: none of them will be emitted. Each goes back
   * to the free list once its decodes in flight have settled (now, or when the last one does),
   * and the next pipeline starts a fresh batch rather than finishing a stale one.
   */
  #abandon(): void {
    this.#current = undefined;
    for (const buffer of this.#buffers.slots) {
      if (buffer.use !== 'filling') continue;
      buffer.open = false;
      buffer.orphaned = true;
      if (buffer.settled === buffer.assigned) this.#recycle(buffer);
    }
  }

  [Symbol.dispose](): void {
    this.close();
  }

  /** Frees every batch buffer; call after the pipeline has stopped. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const b of this.#buffers.slots) this.storage.free(b.pointer);
  }

  #assign(signal?: AbortSignal): Promise<{ buffer: BatchBuffer; index: number }> {
    // Chained so that slots follow input order even when a caller must wait for a free buffer.
    const assigned = this.#assignChain.then(async () => {
      // A stopped pipeline's late items take no slot (its aggregator has abandoned the batch).
      if (signal?.aborted) throw signal.reason;
      let buffer = this.#current;
      if (!buffer) {
        buffer = await this.#buffers.acquire(signal);
        // Handed over just before the pipeline stopped, the buffer arrives after the stop (and after
        // the aggregator's abandon): it goes back, or it would become the open batch that the next
        // pass's first items then join beside this stale item.
        if (signal?.aborted) {
          this.#recycle(buffer);
          throw signal.reason;
        }
        buffer.use = 'filling';
        buffer.orphaned = false;
        buffer.assigned = buffer.settled = 0;
        buffer.failed.length = 0;
        buffer.open = true;
        buffer.sequence = this.#sequence++;
        this.#current = buffer;
      }
      const index = buffer.assigned++;
      if (buffer.assigned === this.#batchSize) {
        buffer.open = false;
        this.#current = undefined;
      }
      return { buffer, index };
    });
    // A wait given up on (stopped pipeline) must not block the assignments after it.
    this.#assignChain = assigned.catch(() => undefined);
    return assigned;
  }

  #finish(buffer: BatchBuffer): Batch | undefined {
    const count = this.#compact(buffer);
    if (count === 0) {
      this.#recycle(buffer);
      return undefined;
    }
    buffer.use = 'handed';
    const lease = batchLease(`batch ${buffer.sequence}`, () => this.#recycle(buffer));
    return this.describe(Object.assign(lease, { buffer, count }));
  }

  /** Moves the last good rows into failed slots; returns the dense count. */
  #compact(buffer: BatchBuffer): number {
    let count = buffer.assigned;
    if (buffer.failed.length === 0) return count;
    const failed = new Set(buffer.failed);
    const slot = this.slotBytes;
    const stride = buffer.extraStride;
    const holes = [...failed].sort((a, b) => a - b);
    for (const hole of holes) {
      while (count > 0 && failed.has(count - 1)) count--;
      if (hole >= count) break;
      const from = count - 1;
      this.storage.move(buffer.pointer, from * slot, hole * slot, slot);
      buffer.labels[hole] = buffer.labels[from] ?? -1;
      buffer.keys[hole] = buffer.keys[from] ?? '';
      if (stride > 0) buffer.extra.copyWithin(hole * stride, from * stride, (from + 1) * stride);
      failed.delete(hole);
      failed.add(from);
      count--;
    }
    while (count > 0 && failed.has(count - 1)) count--;
    return count;
  }

  #recycle(buffer: BatchBuffer): void {
    buffer.use = 'idle';
    buffer.orphaned = false;
    this.#buffers.release(buffer);
  }
}
