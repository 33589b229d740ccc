import { OptionChecker } from '../errors/index.ts';
import type { DecodePool, ImageDecodeOptions, RandomCropOptions } from './pool.ts';
import { hash3, mix32 } from '../random/index.ts';
import { MAX_BATCH_BYTES } from './abi.ts';
import { SlotBatcher, WasmSlots, type FinishedBuffer } from './slot-batches.ts';
export type { ImageBatcherStats, SlotToken } from './slot-batches.ts';

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
 * Decodes images straight into slots of reusable batch buffers in the decode pool's shared memory.
 * Slots are assigned in input order; a batch is complete when every assigned slot has settled
 * (decoded or failed); failed slots are filled by moving later rows down, so batches stay dense.
 * Add it to a pipeline with `builder.batch(batcher, { concurrency: pool.maxInFlight })`: its
 * decode stage, then its aggregator right after it (or `decodeStage` and `aggregator` by hand).
 */
export class ImageBatcher extends SlotBatcher<EncodedImage, ImageBatch> {
  readonly #pool: DecodePool;
  readonly shape: readonly [number, number, number];
  #options: ImageBatcherOptions;
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
    // Each option may be in range while their product is not: a wasm allocation takes 32 bits.
    if (options.batchSize * options.height * options.width * channels > MAX_BATCH_BYTES)
      o.fail('batchSize', 'a batch under 2 GiB (batchSize × height × width × channels)');
    super(new WasmSlots(pool), options.height * options.width * channels, options.batchSize, options.buffers ?? 4, 0);
    this.#pool = pool;
    this.#options = options;
    this.#request = { ...options.decode, width: options.width, height: options.height, channels: channels as 1 | 3 | 4 };
    this.shape = [options.height, options.width, channels];
  }

  protected override async fill(item: EncodedImage, pointer: number): Promise<void> {
    await this.#pool.decodeInto(item.bytes, pointer, this.#requestFor(item.key, item.epoch));
  }

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

  protected override describe(f: FinishedBuffer): ImageBatch {
    const [h, w, c] = this.shape;
    const { buffer, count, guard } = f;
    const view = (this.storage as WasmSlots).view(buffer.pointer, count * this.slotBytes);
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
      ...f.ends,
    };
  }
}

/** FNV-1a over the key's UTF-16 code units: an item's identity for its random draws. */
export function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
