// A resumable stream of WebDataset samples over many shards: per epoch a seeded shard order, this
// consumer's share of it (ranks × workers), and a bounded seeded shuffle buffer. Its state names
// samples by (shard position, sample number), never by bytes, so it is small JSON; restoring re-reads
// only the shards the buffered samples came from.
import { hash3 } from '../random/index.ts';
import { partitionList, resolvePartition, type Partition, type PartitionOptions } from './partition.ts';
import { shuffledEpoch } from './sampling.ts';
import { defaultOpener, readShard, ShardError, type ShardOpener, type ShardReadOptions, type ShardStage } from './shard-reader.ts';
import { isSampleFailure, type WebDatasetOptions, type WebDatasetSample } from './shards.ts';
import type { SourceError } from './tar.ts';
import type { FetchOptions } from './urls.ts';

export interface ShardStreamOptions extends PartitionOptions, WebDatasetOptions {
  seed?: number;
  /** Seeded shard order per epoch (default true). */
  shuffleShards?: boolean;
  /** Samples held for the seeded shuffle; 0 or 1 = shard order (default 0). Memory ≈ this × sample size. */
  bufferSize?: number;
  epochs?: number;
  open?: ShardOpener;
  fetch?: FetchOptions;
  reopenRetries?: number;
  signal?: AbortSignal;
}

export interface ShardSample extends WebDatasetSample {
  shard: string;
  epoch: number;
}
/** A sample (stage 'sample': refused member) or a shard's unread rest (stage 'open'/'read') that was lost. */
export interface ShardFailure {
  key: string;
  shard: string;
  epoch: number;
  stage: 'sample' | ShardStage;
  error: SourceError | ShardError;
}
export type ShardItem = ShardSample | ShardFailure;
export const isShardFailure = (item: ShardItem): item is ShardFailure => 'error' in item;

export interface ShardStreamState {
  kind: 'tandem.shards';
  version: 1;
  shardCount: number;
  seed: number;
  consumer: number;
  consumers: number;
  epoch: number;
  /** Next sample to read: sample `sample` of this consumer's shard number `shard`. */
  shard: number;
  sample: number;
  /** Buffer draws made this epoch (the shuffle's random stream is counter-based). */
  draws: number;
  /** The buffered samples, in buffer order, as [shard position, sample number]. */
  buffer: Array<[number, number]>;
}

interface Slot {
  item: ShardSample | undefined;
  shard: number;
  sample: number;
}

export class ShardStream implements AsyncIterable<ShardItem> {
  private readonly partition: Partition;
  private readonly seed: number;
  private readonly epochs: number;
  private readonly bufferSize: number;
  private readonly read: ShardReadOptions;
  private epoch = 0;
  private shard = 0;
  private sample = 0;
  private draws = 0;
  private buffer: Slot[] = [];
  private started = false;

  constructor(
    readonly shards: readonly string[],
    private readonly options: ShardStreamOptions = {},
  ) {
    this.partition = resolvePartition(options);
    this.seed = options.seed ?? 0;
    this.epochs = options.epochs ?? 1;
    this.bufferSize = Math.max(1, options.bufferSize ?? 0);
    // Only what one shard's reading needs: never a shared shardName, which would mislabel errors.
    this.read = { open: options.open ?? defaultOpener(options.fetch), maxMemberBytes: options.maxMemberBytes, reopenRetries: options.reopenRetries, signal: options.signal };
  }

  /** A stream continuing from `state`; `options` must describe the same shards and shuffle. */
  static fromState(shards: readonly string[], state: ShardStreamState, options: ShardStreamOptions = {}): ShardStream {
    if (state.kind !== 'tandem.shards' || state.version !== 1) throw new Error('not a tandem shard stream state');
    if (state.shardCount !== shards.length) throw new Error(`state is for ${state.shardCount} shards, got ${shards.length}`);
    const stream = new ShardStream(shards, { ...options, seed: state.seed, rank: state.consumer, worldSize: state.consumers, workerId: 0, numWorkers: 1 });
    Object.assign(stream, { epoch: state.epoch, shard: state.shard, sample: state.sample, draws: state.draws });
    stream.buffer = state.buffer.map(([shard, sample]) => ({ item: undefined, shard, sample }));
    return stream;
  }

  /** The position after the items delivered so far: save it with a checkpoint. */
  state(): ShardStreamState {
    const { consumer, consumers } = this.partition;
    return {
      kind: 'tandem.shards',
      version: 1,
      shardCount: this.shards.length,
      seed: this.seed,
      consumer,
      consumers,
      epoch: this.epoch,
      shard: this.shard,
      sample: this.sample,
      draws: this.draws,
      buffer: this.buffer.map((s) => [s.shard, s.sample]),
    };
  }

  /** This consumer's shards for `epoch`, in reading order. */
  shardsFor(epoch: number): string[] {
    const order = this.options.shuffleShards === false ? this.shards.slice() : shuffledEpoch(this.shards, this.seed, epoch);
    return partitionList(order, this.partition);
  }

  private draw(n: number): number {
    return Math.floor((hash3(hash3(this.seed, this.epoch, 0xb0ff), this.draws++) / 4294967296) * n);
  }

  /** Takes a random buffered sample out (swap with the last, so removal is O(1)). */
  private take(): Slot {
    const j = this.draw(this.buffer.length);
    const slot = this.buffer[j]!;
    const last = this.buffer.pop()!;
    if (j < this.buffer.length) this.buffer[j] = last;
    return slot;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ShardItem> {
    if (this.started) throw new Error('a ShardStream is iterated once; make another with fromState(state())');
    this.started = true;
    for (; this.epoch < this.epochs; this.epoch++, this.shard = 0, this.sample = 0, this.draws = 0) {
      const mine = this.shardsFor(this.epoch);
      yield* this.refill(mine);
      for (; this.shard < mine.length; this.shard++, this.sample = 0) {
        const name = mine[this.shard]!;
        try {
          for await (const item of readShard(name, this.sample, this.read)) {
            const at = this.sample++;
            if (isSampleFailure(item)) {
              yield { key: item.key, shard: name, epoch: this.epoch, stage: 'sample', error: item.error };
              continue;
            }
            const slot: Slot = { item: { ...item, shard: name, epoch: this.epoch }, shard: this.shard, sample: at };
            if (this.buffer.length < this.bufferSize) this.buffer.push(slot);
            if (this.buffer.length === this.bufferSize) yield this.take().item!;
          }
        } catch (error) {
          if (!(error instanceof ShardError)) throw error;
          yield { key: name, shard: name, epoch: this.epoch, stage: error.stage, error };
        }
      }
      while (this.buffer.length > 0) yield this.take().item!;
    }
  }

  /**
   * After a restore: re-reads the shards the buffered samples came from, up to the read cursor,
   * putting each buffered sample back in its slot. Samples that cannot be re-read are reported.
   */
  private async *refill(mine: string[]): AsyncGenerator<ShardItem> {
    const wanted = new Map<string, Slot>();
    for (const slot of this.buffer) if (slot.item === undefined) wanted.set(`${slot.shard}:${slot.sample}`, slot);
    if (wanted.size === 0) return;
    const first = Math.min(...this.buffer.map((s) => s.shard));
    for (let position = first; position <= this.shard && position < mine.length && wanted.size > 0; position++) {
      const name = mine[position]!;
      const end = position === this.shard ? this.sample : Infinity;
      if (end === 0) break;
      let at = 0;
      try {
        for await (const item of readShard(name, 0, this.read)) {
          const slot = wanted.get(`${position}:${at}`);
          if (slot && !isSampleFailure(item)) {
            slot.item = { ...item, shard: name, epoch: this.epoch };
            wanted.delete(`${position}:${at}`);
          }
          if (++at >= end) break;
        }
      } catch (error) {
        if (!(error instanceof ShardError)) throw error;
      }
    }
    for (const slot of wanted.values()) {
      const name = mine[slot.shard] ?? `#${slot.shard}`;
      const error = new ShardError(name, 'read', slot.sample, 1, { cause: new Error(`buffered sample ${slot.sample} could not be re-read on restore`) });
      yield { key: `${name}#${slot.sample}`, shard: name, epoch: this.epoch, stage: 'read', error };
    }
    this.buffer = this.buffer.filter((s) => s.item !== undefined);
  }
}
