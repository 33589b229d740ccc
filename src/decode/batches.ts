import { BatchReleasedError, OptionChecker } from '../errors/index.ts';
import type { DecodePool, ImageDecodeOptions, RandomCropOptions } from './pool.ts';
import { hash3, mix32 } from '../random/index.ts';
import { SlotPool } from '../sync/index.ts';

/** One item to decode: encoded bytes plus what travels with them into the batch. */
export interface EncodedImage {
  bytes: Uint8Array;
  label?: number;
  key?: string;
  /** The epoch this item belongs to, for its random crop; default: the batcher's (setEpoch). */
  epoch?: number;
}

/** A batch of decoded images in shared wasm memory: u8, NHWC, `count` dense rows. */
export interface ImageBatch {
  readonly sequence: number;
  readonly count: number;
  readonly shape: readonly [number, number, number, number];
  readonly dtype: 'uint8';
  readonly layout: 'NHWC';
  /** A view of the batch in wasm memory (no copy); valid until release(). Read it after any allocation in the pool: the view is renewed when the memory grew. */
  readonly data: Uint8Array;
  /** Byte offset of the batch in wasm memory. */
  readonly pointer: number;
  readonly labels: Int32Array;
  readonly keys: readonly string[];
  /** Returns the buffer to the batcher; using the batch afterwards throws. */
  release(): void;
  [Symbol.dispose](): void;
}

/** What the decode stage passes on: a settled slot, and whether it completed its batch. */
export interface SlotToken {
  readonly buffer: BatchBuffer;
  readonly completes: boolean;
}

export interface ImageBatcherOptions {
  batchSize: number;
  height: number;
  width: number;
  channels?: 1 | 3 | 4;
  /** Batch buffers in wasm memory (default 4): decoding fills one while others are consumed. */
  buffers?: number;
  decode?: Omit<ImageDecodeOptions, 'width' | 'height' | 'channels' | 'randomCrop'>;
  /**
   * The ImageNet training transform, `RandomResizedCrop(size) + RandomHorizontalFlip()`, fused
   * into decode (see ImageDecodeOptions.randomCrop). Each item's draw comes from (seed, epoch,
   * key), so a run is reproducible and every epoch crops anew: call setEpoch at each epoch, as
   * with PyTorch's DistributedSampler. Items without a key use their position in the epoch.
   */
  randomCrop?: Omit<RandomCropOptions, 'seed'> & { seed?: number };
}

/**
 * What a batch buffer is doing: being filled by the decode stage, handed out as an ImageBatch, or
 * nothing (given back; the SlotPool may already have lent it to a decode that has not resumed).
 * Whether it is free is the SlotPool's to know.
 */
type BufferUse = 'idle' | 'filling' | 'handed';

/** How many of an ImageBatcher's buffers are in each state. */
export interface ImageBatcherStats {
  buffers: number;
  free: number;
  filling: number;
  handed: number;
  /** Decodes waiting for a free buffer (the consumer holds them all, or they are being filled). */
  waiting: number;
}

class BatchBuffer {
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
  constructor(
    readonly pointer: number,
    readonly slotBytes: number,
    capacity: number,
  ) {
    this.labels = new Int32Array(capacity);
    this.keys = new Array<string>(capacity).fill('');
  }
}

/**
 * Decodes images straight into slots of reusable batch buffers in the decode pool's shared memory.
 * Slots are assigned in input order; a batch is complete when every assigned slot has settled
 * (decoded or failed); failed slots are filled by moving later rows down, so batches stay dense.
 * Add it to a pipeline with `builder.batch(batcher, { concurrency: pool.maxInFlight })`: its
 * decode stage, then its aggregator right after it (or `decodeStage` and `aggregator` by hand).
 */
export class ImageBatcher {
  readonly slotBytes: number;
  readonly shape: readonly [number, number, number];
  #pool: DecodePool;
  #options: ImageBatcherOptions;
  /** The batch buffers in wasm memory, lent to the batch being filled and to batches handed out. */
  #buffers: SlotPool<BatchBuffer>;
  #closed = false;
  #current: BatchBuffer | undefined;
  #assignChain: Promise<unknown> = Promise.resolve();
  #sequence = 0;
  /** The request shared by every item (target size and decode options), made once. */
  #request: ImageDecodeOptions;
  #epoch = 0;
  /** Items assigned since setEpoch: the draw of an item without a key. */
  #position = 0;

  constructor(pool: DecodePool, options: ImageBatcherOptions) {
    const o = new OptionChecker('ImageBatcher options', options, [
      'batchSize',
      'height',
      'width',
      'channels',
      'buffers',
      'decode',
      'randomCrop',
    ]);
    o.integer('batchSize', 0, 1, 65536);
    o.integer('height', 0, 1, 32768);
    o.integer('width', 0, 1, 32768);
    const channels = o.integer('channels', 3, 1, 4);
    if (channels === 2) o.fail('channels', '1, 3 or 4');
    o.optionalInteger('buffers', 2, 1024);
    const decode = o.raw('decode');
    if (decode !== undefined && (typeof decode !== 'object' || decode === null)) o.fail('decode', 'an object of decode options');
    const crop = o.raw('randomCrop');
    if (crop !== undefined && (typeof crop !== 'object' || crop === null)) o.fail('randomCrop', 'an object ({ seed, scale, ratio, flip })');
    this.#pool = pool;
    this.#options = options;
    this.#request = { ...options.decode, width: options.width, height: options.height, channels: channels as 1 | 3 | 4 };
    this.shape = [options.height, options.width, channels];
    this.slotBytes = options.height * options.width * channels;
    const count = Math.max(2, options.buffers ?? 4);
    // Rounded up to 4 bytes: GPU uploads copy whole words.
    const bytes = Math.ceil((this.slotBytes * options.batchSize) / 4) * 4;
    this.#buffers = new SlotPool(
      Array.from({ length: count }, () => new BatchBuffer(pool.malloc(bytes), this.slotBytes, options.batchSize)),
    );
  }

  get batchBytes(): number {
    return this.slotBytes * this.#options.batchSize;
  }

  /**
   * Pipeline stage (async generator): decodes one item into the next slot and yields a token;
   * a failed item yields the token only if it completed its batch, then throws its DecodeError.
   * Waiting for a free batch buffer ends when the stage's signal aborts (the pipeline stopped).
   */
  readonly decodeStage = async function* (
    this: ImageBatcher,
    item: EncodedImage,
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
      await this.#pool.decodeInto(item.bytes, buffer.pointer + index * this.slotBytes, this.#requestFor(item.key, item.epoch));
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

  /** Starts the random crops of epoch `epoch` (with `randomCrop`): the same epoch draws the same crops. */
  setEpoch(epoch: number): void {
    if (!Number.isInteger(epoch) || epoch < 0) throw new RangeError(`epoch must be a whole number, got ${epoch}`);
    this.#epoch = epoch;
    this.#position = 0;
  }

  #requestFor(key: string | undefined, epoch = this.#epoch): ImageDecodeOptions {
    const random = this.#options.randomCrop;
    const position = this.#position++;
    if (!random) return this.#request;
    const item = key ? keyHash(key) : mix32(position ^ 0x5bd1e995);
    return { ...this.#request, randomCrop: { ...random, seed: hash3(mix32((random.seed ?? 0) ^ item), epoch, 0x52524331) | 0 } };
  }

  /**
   * The decode stage for `PipelineBuilder.batch(batcher, options)`, which puts this batcher's
   * aggregator right after it (the same function as decodeStage).
   */
  get stage(): typeof this.decodeStage {
    return this.decodeStage;
  }

  /** Aggregator for the stage after decodeStage: emits each batch once it is complete. */
  aggregator(): { push(token: SlotToken): ImageBatch | undefined; flush(): ImageBatch | undefined; abandon(): void } {
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
    for (const b of this.#buffers.slots) this.#pool.free(b.pointer);
  }

  #assign(signal?: AbortSignal): Promise<{ buffer: BatchBuffer; index: number }> {
    // Chained so that slots follow input order even when a caller must wait for a free buffer.
    const assigned = this.#assignChain.then(async () => {
      // A stopped pipeline's late items take no slot (its aggregator has abandoned the batch).
      if (signal?.aborted) throw signal.reason;
      let buffer = this.#current;
      if (!buffer) {
        buffer = await this.#buffers.acquire(signal);
        buffer.use = 'filling';
        buffer.orphaned = false;
        buffer.assigned = buffer.settled = 0;
        buffer.failed.length = 0;
        buffer.open = true;
        buffer.sequence = this.#sequence++;
        this.#current = buffer;
      }
      const index = buffer.assigned++;
      if (buffer.assigned === this.#options.batchSize) {
        buffer.open = false;
        this.#current = undefined;
      }
      return { buffer, index };
    });
    // A wait given up on (stopped pipeline) must not block the assignments after it.
    this.#assignChain = assigned.catch(() => undefined);
    return assigned;
  }

  #finish(buffer: BatchBuffer): ImageBatch | undefined {
    const count = this.#compact(buffer);
    if (count === 0) {
      this.#recycle(buffer);
      return undefined;
    }
    const [h, w, c] = this.shape;
    const memory = this.#pool.memory;
    buffer.use = 'handed';
    let released = false;
    const bytes = count * this.slotBytes;
    // Taken again when the memory's buffer changed: in the workers mode a growth replaces the
    // unshared buffer and detaches views of the old one (shared memory keeps them valid).
    let data = new Uint8Array(memory.buffer, buffer.pointer, bytes);
    const view = () => {
      if (data.buffer !== memory.buffer) data = new Uint8Array(memory.buffer, buffer.pointer, bytes);
      return data;
    };
    const release = () => {
      if (released) throw new BatchReleasedError(`batch ${buffer.sequence} was already released`);
      released = true;
      this.#recycle(buffer);
    };
    const guard = <T>(value: T): T => {
      if (released) throw new BatchReleasedError(`batch ${buffer.sequence} was used after release()`);
      return value;
    };
    return {
      sequence: buffer.sequence,
      count,
      shape: [count, h, w, c],
      dtype: 'uint8',
      layout: 'NHWC',
      get data() {
        return guard(view());
      },
      pointer: buffer.pointer,
      get labels() {
        return guard(buffer.labels.subarray(0, count));
      },
      get keys() {
        return guard(buffer.keys.slice(0, count));
      },
      release,
      [Symbol.dispose]: () => {
        if (!released) release();
      },
    };
  }

  /** Moves the last good rows into failed slots; returns the dense count. */
  #compact(buffer: BatchBuffer): number {
    let count = buffer.assigned;
    if (buffer.failed.length === 0) return count;
    const failed = new Set(buffer.failed);
    const heap = new Uint8Array(this.#pool.memory.buffer);
    const slot = this.slotBytes;
    const holes = [...failed].sort((a, b) => a - b);
    for (const hole of holes) {
      while (count > 0 && failed.has(count - 1)) count--;
      if (hole >= count) break;
      const from = count - 1;
      heap.copyWithin(buffer.pointer + hole * slot, buffer.pointer + from * slot, buffer.pointer + (from + 1) * slot);
      buffer.labels[hole] = buffer.labels[from] ?? -1;
      buffer.keys[hole] = buffer.keys[from] ?? '';
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

/** FNV-1a over the key's UTF-16 code units: an item's identity for its random draws. */
function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
