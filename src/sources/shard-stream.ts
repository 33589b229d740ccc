// A resumable stream of WebDataset samples over many shards: per epoch a seeded shard order, this
// consumer's share of it (ranks × workers), and a bounded seeded shuffle buffer. Its state names
// samples by (shard position, sample number), never by bytes, so it is small JSON; restoring re-reads
// only the shards the buffered samples came from.
import { DatasetError } from './errors.ts';
import { type Failed, isFailure } from '../errors/index.ts';
import { hash3 } from '../random/index.ts';
import { resolvePartition, type Partition, type PartitionOptions } from './partition.ts';
import {
  checkShardFormat,
  defaultOpener,
  readShard,
  ShardError,
  type ShardFormatOptions,
  type ShardOpener,
  type ShardReadOptions,
  type ShardSampleReader,
  type ShardStage,
} from './shard-reader.ts';
import type { WebDatasetOptions, WebDatasetSample } from './shards.ts';
import type { SourceError } from './tar.ts';
import type { FetchOptions } from './urls.ts';
import { StateLog, type PlannedEpoch, type ShardPiece, type ShardStreamState } from './shard-state.ts';
import { firstWanted, lastWanted, piecesFor, wants } from './shard-plan.ts';
import type { ByteCache } from './cache.ts';
import { cachingOpener } from './cache-opener.ts';

export type { ShardStreamState } from './shard-state.ts';

export interface ShardStreamOptions extends PartitionOptions, WebDatasetOptions, ShardFormatOptions {
  seed?: number;
  /** Seeded shard order per epoch (default true). */
  shuffleShards?: boolean;
  /** Samples held for the seeded shuffle; 0 or 1 = shard order (default 0). Memory ≈ this × sample size. */
  bufferSize?: number;
  /** How many items behind the latest `stateAt` can go (default 16384): the most a pipeline reads ahead. */
  stateLag?: number;
  epochs?: number;
  open?: ShardOpener;
  /** Reads each shard's samples itself (a Parquet row group by byte ranges) instead of `open` + `format`. */
  reader?: ShardSampleReader;
  /** Told the next shard this stream will read as it starts a shard, so it can be fetched meanwhile. */
  prefetch?: (shard: string) => void;
  fetch?: FetchOptions;
  /** Keeps whole shards read to their end, so later epochs stream them from the cache. */
  cache?: ByteCache;
  reopenRetries?: number;
  signal?: AbortSignal;
}

export interface ShardSample extends WebDatasetSample {
  shard: string;
  epoch: number;
  /** Position in this stream over all epochs: `stateAt(item.index + 1)` continues after it. */
  index: number;
}
/** A sample (stage 'sample': refused member) or a shard's unread rest (stage 'open'/'read') that was lost. */
export interface ShardFailure extends Failed<'sample' | ShardStage, SourceError | ShardError> {
  shard: string;
  epoch: number;
  index: number;
}
export type ShardItem = ShardSample | ShardFailure;

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
  private plan: PlannedEpoch[] | undefined;
  private readonly log: StateLog;

  constructor(
    readonly shards: readonly string[],
    private readonly options: ShardStreamOptions = {},
  ) {
    checkShardFormat(options, 'ShardStream options');
    this.partition = resolvePartition(options);
    this.seed = options.seed ?? 0;
    this.epochs = options.epochs ?? 1;
    this.bufferSize = Math.max(1, options.bufferSize ?? 0);
    this.log = new StateLog(options.stateLag);
    // Only what one shard's reading needs: never a shared shardName, which would mislabel errors.
    const open = options.open ?? defaultOpener(options.fetch);
    this.read = {
      open: options.cache ? cachingOpener(open, options.cache) : open,
      ...(options.reader ? { reader: options.reader } : {}),
      maxMemberBytes: options.maxMemberBytes,
      format: options.format,
      tokenShards: options.tokenShards,
      reopenRetries: options.reopenRetries,
      signal: options.signal,
    };
  }

  /** A stream continuing from `state`; `options` must describe the same shards and shuffle. */
  static fromState(shards: readonly string[], state: ShardStreamState, options: ShardStreamOptions = {}): ShardStream {
    if (state?.kind !== 'tandem.shards' || (state.version !== 1 && state.version !== 2))
      throw new DatasetError('not-a-state', 'not a tandem shard stream state (or of a newer version)');
    if (state.shardCount !== shards.length)
      throw new DatasetError('state-mismatch', `state is for ${state.shardCount} shards, got ${shards.length}`);
    const stream = new ShardStream(shards, {
      ...options,
      seed: state.seed,
      rank: state.consumer,
      worldSize: state.consumers,
      workerId: 0,
      numWorkers: 1,
      shuffleShards: state.shuffleShards !== false,
      uneven: state.uneven ?? 'exact',
    });
    stream.restore(state);
    return stream;
  }

  private restore(state: ShardStreamState): void {
    ({ epoch: this.epoch, shard: this.shard, sample: this.sample, draws: this.draws, plan: this.plan } = state);
    // Slots without items: refill() reads them back before anything is drawn.
    this.buffer = state.buffer.map(([shard, sample]) => ({ item: undefined, shard, sample }));
  }

  /**
   * The position after item number `count` (item.index + 1), which may be up to `stateLag` items
   * behind the latest: save it with a checkpoint, for the last item the training loop consumed.
   */
  stateAt(count: number): ShardStreamState {
    return !this.started && count === 0 ? this.state() : this.log.stateAt(count);
  }

  /** The position after the items delivered so far. */
  state(): ShardStreamState {
    const { consumer, consumers, uneven } = this.partition;
    return {
      kind: 'tandem.shards',
      version: this.plan ? 2 : 1,
      shardCount: this.shards.length,
      seed: this.seed,
      consumer,
      consumers,
      ...(this.options.shuffleShards === false ? { shuffleShards: false as const } : {}),
      ...(uneven !== 'exact' ? { uneven } : {}),
      epoch: this.epoch,
      shard: this.shard,
      sample: this.sample,
      draws: this.draws,
      buffer: this.buffer.map((s) => [s.shard, s.sample]),
      ...(this.plan ? { plan: this.plan } : {}),
    };
  }

  /** This consumer's shards for `epoch`, in reading order (whole or in part, after a regroup). */
  shardsFor(epoch: number): string[] {
    return this.piecesFor(epoch).map(([shard]) => this.shards[shard]!);
  }

  private piecesFor(epoch: number): ShardPiece[] {
    const { consumer, consumers, uneven } = this.partition;
    const shuffleShards = this.options.shuffleShards === false ? false : undefined;
    return piecesFor(
      {
        shardCount: this.shards.length,
        seed: this.seed,
        consumer,
        consumers,
        shuffleShards,
        plan: this.plan,
        ...(uneven !== 'exact' ? { uneven } : {}),
      },
      epoch,
    );
  }

  private draw(n: number): number {
    return Math.floor((hash3(hash3(this.seed, this.epoch, 0xb0ff), this.draws++) / 4294967296) * n);
  }

  /** Takes a random buffered sample out (swap with the last, so removal is O(1)). */
  private take(): Slot {
    const j = this.draw(this.buffer.length);
    this.log.take(j);
    const slot = this.buffer[j]!;
    const last = this.buffer.pop()!;
    if (j < this.buffer.length) this.buffer[j] = last;
    return slot;
  }

  /** Stamps an item with its index and logs the cursor after it. */
  private emit<T extends ShardItem>(item: T): T {
    item.index = this.log.emit(this.epoch, this.shard, this.sample, this.draws);
    return item;
  }

  private fail(key: string, shard: string, stage: ShardFailure['stage'], error: ShardFailure['error']): ShardFailure {
    return this.emit({ key, shard, epoch: this.epoch, stage, error, index: -1 });
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ShardItem> {
    if (this.started) throw new DatasetError('iterated', 'a ShardStream is iterated once; make another with fromState(state())');
    this.started = true;
    this.log.reset(this.state(), 0);
    for (; this.epoch < this.epochs; this.epoch++, this.shard = 0, this.sample = 0, this.draws = 0) {
      const pieces = this.piecesFor(this.epoch);
      yield* this.refill(pieces);
      while (this.shard < pieces.length) {
        const piece = pieces[this.shard]!;
        const name = this.shards[piece[0]]!;
        const next = pieces[this.shard + 1];
        // The next shard is hinted once this one's read has been taken (its first sample is here),
        // or once it is done with: hinted before, a reader that reads one shard ahead would drop
        // the read of this very shard for the next one's, and read this one twice.
        let hinted = false;
        const hint = () => {
          if (hinted || !next || !this.options.prefetch) return;
          hinted = true;
          this.options.prefetch(this.shards[next[0]] ?? '');
        };
        const start = firstWanted(piece, this.sample);
        const last = lastWanted(piece);
        let lost: ShardError | undefined;
        if (start >= 0) {
          this.sample = start;
          try {
            for await (const item of readShard(name, start, this.read)) {
              hint();
              const at = this.sample++;
              if (!wants(piece, at)) continue;
              if (isFailure(item)) yield this.fail(item.key, name, 'sample', item.error);
              else {
                // The buffer is never full here: it is drawn from as soon as it fills.
                this.buffer.push({ item: { ...item, shard: name, epoch: this.epoch, index: -1 }, shard: this.shard, sample: at });
                this.log.push(this.shard, at);
                if (this.buffer.length === this.bufferSize) yield this.emit(this.take().item!);
              }
              if (at >= last) break;
            }
          } catch (error) {
            if (!(error instanceof ShardError)) throw error;
            lost = error;
          }
        }
        hint();
        // The cursor moves on before a lost shard is reported, so a state saved then does not retry it.
        this.shard++;
        this.sample = 0;
        if (lost) yield this.fail(name, name, lost.stage, lost);
      }
      while (this.buffer.length > 0) yield this.emit(this.take().item!);
    }
  }

  /**
   * After a restore: re-reads the shards the buffered samples came from, up to the read cursor,
   * putting each buffered sample back in its slot. Samples that cannot be re-read are reported.
   */
  private async *refill(pieces: ShardPiece[]): AsyncGenerator<ShardItem> {
    const wanted = new Map<string, Slot>();
    for (const slot of this.buffer) if (slot.item === undefined) wanted.set(`${slot.shard}:${slot.sample}`, slot);
    if (wanted.size === 0) return;
    // A loop, not Math.min(...): a shuffle buffer of 100k samples and more would overflow the stack.
    let first = this.shard;
    for (const slot of this.buffer) if (slot.shard < first) first = slot.shard;
    for (let position = first; position <= this.shard && position < pieces.length && wanted.size > 0; position++) {
      const name = this.shards[pieces[position]![0]]!;
      const end = position === this.shard ? this.sample : Infinity;
      if (end === 0) break;
      let at = 0;
      try {
        for await (const item of readShard(name, 0, this.read)) {
          const slot = wanted.get(`${position}:${at}`);
          if (slot && !isFailure(item)) {
            slot.item = { ...item, shard: name, epoch: this.epoch, index: -1 };
            wanted.delete(`${position}:${at}`);
          }
          if (++at >= end) break;
        }
      } catch (error) {
        if (!(error instanceof ShardError)) throw error;
      }
    }
    this.buffer = this.buffer.filter((s) => s.item !== undefined);
    this.log.reset(this.state(), 0);
    for (const slot of wanted.values()) {
      const piece = pieces[slot.shard];
      const name = piece ? this.shards[piece[0]]! : `#${slot.shard}`;
      const error = new ShardError(name, 'read', slot.sample, 1, {
        cause: new Error(`buffered sample ${slot.sample} could not be re-read on restore`),
      });
      yield this.fail(`${name}#${slot.sample}`, name, 'read', error);
    }
  }
}
