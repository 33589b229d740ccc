// The state of a shard stream as of any recently delivered item, not only the latest: a pipeline
// reads ahead of the training loop, so the checkpoint must name the position of the last item the
// loop consumed. A flat log of numbers (buffer pushes, takes, and per-item cursors) since a base
// state is replayed on demand: O(1) work and no object per item.

import { DatasetError } from './errors.ts';
import type { UnevenMode } from './partition.ts';

/**
 * `[shard, from, ...samples]`: of shard number `shard` (in the stream's shard list), every sample
 * from number `from` to its end (`from` −1: none), plus the listed sample numbers (ascending).
 */
export type ShardPiece = [shard: number, from: number, ...samples: number[]];

/** The pieces of one epoch that a regroup gave this consumer, instead of its share of whole shards. */
export interface PlannedEpoch {
  epoch: number;
  pieces: ShardPiece[];
}

/** Version 1 reads whole shards every epoch; version 2 adds `plan`, written by a regroup. */
export interface ShardStreamState {
  kind: 'tandem.shards';
  version: 1 | 2;
  shardCount: number;
  /** What the shards are where more than their count must match on resume (Parquet: files, columns, row groups). */
  source?: string;
  seed: number;
  consumer: number;
  consumers: number;
  /** Present when false: shards are read in list order every epoch. */
  shuffleShards?: false;
  /** Present when not 'exact'. */
  uneven?: Exclude<UnevenMode, 'exact'>;
  epoch: number;
  /** Next sample to read: sample number `sample` of this epoch's piece number `shard` (without a plan, a piece is a whole shard). */
  shard: number;
  sample: number;
  /** Buffer draws made this epoch (the shuffle's random stream is counter-based). */
  draws: number;
  /** The buffered samples, in buffer order, as [piece position, sample number]. */
  buffer: Array<[number, number]>;
  /** Epochs whose pieces a regroup dealt out (regroupShardStates); other epochs read this consumer's share of the shards. */
  plan?: PlannedEpoch[];
}

const PUSH = 1;
const TAKE = 2;
const EMIT = 3;

export class StateLog {
  private base: ShardStreamState | undefined;
  private baseCount = 0;
  private ops: number[] = [];
  private count = 0;

  /** `keep`: how many items back a state can be asked for (older ones are folded into the base). */
  constructor(private readonly keep = 16_384) {}

  /** Forget everything before `state`, which is the position after `count` items. */
  reset(state: ShardStreamState, count: number): void {
    this.base = state;
    this.baseCount = count;
    this.count = count;
    this.ops.length = 0;
  }
  push(shard: number, sample: number): void {
    this.ops.push(PUSH, shard, sample);
  }
  take(index: number): void {
    this.ops.push(TAKE, index);
  }
  /** Records an item's delivery with the cursor after it; returns its index. */
  emit(epoch: number, shard: number, sample: number, draws: number): number {
    this.ops.push(EMIT, epoch, shard, sample, draws);
    if (this.count - this.baseCount > 2 * this.keep) this.fold(this.count - this.keep);
    return this.count++;
  }

  /** The state after `count` items (counted over the stream's life, as item.index + 1). */
  stateAt(count: number): ShardStreamState {
    if (!this.base || count < this.baseCount || count > this.count) {
      throw new DatasetError(
        'position-unavailable',
        `state after ${count} items is not available (only ${this.baseCount}..${this.count}; raise stateLag, or ask sooner)`,
      );
    }
    return this.replay(count).state;
  }

  private fold(count: number): void {
    const { state, opIndex } = this.replay(count);
    this.base = state;
    this.baseCount = count;
    this.ops.splice(0, opIndex);
  }

  private replay(count: number): { state: ShardStreamState; opIndex: number } {
    const base = this.base!;
    const buffer = base.buffer.map((ref) => [ref[0], ref[1]] as [number, number]);
    let { epoch, shard, sample, draws } = base;
    let seen = this.baseCount;
    let i = 0;
    const ops = this.ops;
    while (seen < count && i < ops.length) {
      const op = ops[i]!;
      if (op === PUSH) {
        buffer.push([ops[i + 1]!, ops[i + 2]!]);
        i += 3;
      } else if (op === TAKE) {
        const j = ops[i + 1]!;
        const last = buffer.pop()!;
        if (j < buffer.length) buffer[j] = last;
        i += 2;
      } else {
        [epoch, shard, sample, draws] = [ops[i + 1]!, ops[i + 2]!, ops[i + 3]!, ops[i + 4]!];
        i += 5;
        seen++;
      }
    }
    return { state: { ...base, epoch, shard, sample, draws, buffer }, opIndex: i };
  }
}
