// A resumable, rank-aware index sampler: DistributedSampler's order (seeded shuffle per epoch, then
// this consumer's positions) with a cursor that fits in a checkpoint as plain JSON.
import { DatasetError } from './errors.ts';
import { OptionChecker } from '../errors/index.ts';
import { streamFor } from '../random/index.ts';
import { partitionLength, partitionPosition, resolvePartition, type Partition, type PartitionOptions } from './partition.ts';

export interface SamplerOptions extends PartitionOptions {
  /** Number of items in the dataset (indices 0..size-1). */
  size: number;
  seed?: number;
  /** Seeded shuffle per epoch (default true); false keeps index order. */
  shuffle?: boolean;
  /** Epochs to run before the iterator ends (default 1; Infinity for endless). */
  epochs?: number;
}

/** Everything needed to continue exactly where a sampler stood. Plain JSON. */
export interface SamplerState {
  kind: 'tandem.sampler';
  version: 1;
  size: number;
  seed: number;
  shuffle: boolean;
  consumer: number;
  consumers: number;
  uneven: Partition['uneven'];
  epochs: number | null;
  /** The epoch of the next item, and how many of this consumer's items of it were already handed out. */
  epoch: number;
  offset: number;
}

/**
 * The epoch's order of 0..size-1: the same Fisher–Yates over the same per-epoch stream as
 * shuffledEpoch, so sampling indices and shuffling an array agree.
 */
function epochOrder(size: number, seed: number, epoch: number, into: Uint32Array): void {
  for (let i = 0; i < size; i++) into[i] = i;
  const rng = streamFor(seed, epoch, 0x5eed);
  for (let i = size - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = into[i]!;
    into[i] = into[j]!;
    into[j] = t;
  }
}

export class DistributedSampler implements IterableIterator<number> {
  readonly size: number;
  readonly seed: number;
  readonly shuffle: boolean;
  readonly partition: Partition;
  readonly epochs: number;
  /** Items this consumer gets per epoch. */
  readonly perEpoch: number;
  private epochValue = 0;
  private offsetValue = 0;
  // One permutation buffer reused across epochs; rebuilt only when the epoch changes.
  private order: Uint32Array | undefined;
  private orderEpoch = -1;

  constructor(options: SamplerOptions) {
    const o = new OptionChecker('DistributedSampler options', options, [
      'size',
      'seed',
      'shuffle',
      'epochs',
      'rank',
      'worldSize',
      'workerId',
      'numWorkers',
      'uneven',
    ]);
    o.integer('size', 0, 0);
    o.integer('seed', 0, -0x80000000, 0xffffffff);
    o.boolean('shuffle', true);
    if (options.epochs !== Infinity) o.integer('epochs', 1, 0);
    this.size = options.size;
    this.seed = options.seed ?? 0;
    this.shuffle = options.shuffle ?? true;
    this.partition = resolvePartition(options);
    this.epochs = options.epochs ?? 1;
    this.perEpoch = partitionLength(this.size, this.partition);
  }

  /** A sampler continuing from a saved state (the dataset size must still match). */
  static fromState(state: SamplerState): DistributedSampler {
    if (state.kind !== 'tandem.sampler' || state.version !== 1)
      throw new DatasetError('not-a-state', `not a tandem sampler state: ${JSON.stringify(state).slice(0, 80)}`);
    // The saved consumer already flattens rank × worker, so it is restored as a rank of `consumers`.
    const sampler = new DistributedSampler({
      size: state.size,
      seed: state.seed,
      shuffle: state.shuffle,
      rank: state.consumer,
      worldSize: state.consumers,
      uneven: state.uneven,
      epochs: state.epochs ?? Infinity,
    });
    sampler.seek(state.epoch, state.offset);
    return sampler;
  }

  get epoch(): number {
    return this.epochValue;
  }
  get offset(): number {
    return this.offsetValue;
  }
  /** Items handed out so far, over all epochs. */
  get step(): number {
    return this.epochValue * this.perEpoch + this.offsetValue;
  }

  /** Starts `epoch` from its beginning (PyTorch's set_epoch), or continues mid-epoch with `offset`. */
  seek(epoch: number, offset = 0): void {
    if (!Number.isInteger(epoch) || epoch < 0 || !Number.isInteger(offset) || offset < 0 || offset > this.perEpoch)
      throw new RangeError(`cannot seek to epoch ${epoch} offset ${offset} (${this.perEpoch} per epoch)`);
    this.epochValue = epoch;
    this.offsetValue = offset;
  }

  /** The state now, or after `step` items from the very start (for a consumer that is behind its prefetching source). */
  state(step = this.step): SamplerState {
    const epoch = this.perEpoch === 0 ? 0 : Math.floor(step / this.perEpoch);
    const { consumer, consumers, uneven } = this.partition;
    return {
      kind: 'tandem.sampler',
      version: 1,
      size: this.size,
      seed: this.seed,
      shuffle: this.shuffle,
      consumer,
      consumers,
      uneven,
      epochs: Number.isFinite(this.epochs) ? this.epochs : null,
      epoch,
      offset: step - epoch * this.perEpoch,
    };
  }

  /** The index at this consumer's position `k` of `epoch`. */
  indexAt(epoch: number, k: number): number {
    const position = partitionPosition(k, this.size, this.partition);
    if (!this.shuffle) return position;
    if (this.orderEpoch !== epoch) {
      this.order ??= new Uint32Array(this.size);
      epochOrder(this.size, this.seed, epoch, this.order);
      this.orderEpoch = epoch;
    }
    return this.order![position]!;
  }

  next(): IteratorResult<number> {
    if (this.offsetValue >= this.perEpoch) {
      if (this.perEpoch === 0) return { done: true, value: undefined };
      this.epochValue++;
      this.offsetValue = 0;
    }
    if (this.epochValue >= this.epochs) return { done: true, value: undefined };
    return { done: false, value: this.indexAt(this.epochValue, this.offsetValue++) };
  }

  [Symbol.iterator](): IterableIterator<number> {
    return this;
  }

  /** The items at the sampled indices, e.g. `addSource(sampler.over(files))`. */
  *over<T>(items: readonly T[]): Generator<T> {
    if (items.length !== this.size) throw new RangeError(`sampler is for ${this.size} items, got ${items.length}`);
    for (let r = this.next(); r.done !== true; r = this.next()) yield items[r.value]!;
  }
}
