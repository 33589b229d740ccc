// What a shard stream reads in an epoch, as pieces of shards, and how the unread rest of an epoch
// is dealt out again when the number of consumers changes (elastic resumption). A normal epoch's
// pieces are this consumer's whole shards; after a regroup, an epoch's pieces are whatever the old
// consumers had not delivered: samples left in their shuffle buffers, the rest of the shard each was
// reading, and the shards each had not reached.
import { DatasetError } from './errors.ts';
import { partitionList } from './partition.ts';
import { shuffledEpoch } from './sampling.ts';
import type { PlannedEpoch, ShardPiece, ShardStreamState } from './shard-state.ts';

export type { PlannedEpoch, ShardPiece } from './shard-state.ts';

/** The fields of a state that decide which pieces a consumer reads in an epoch. */
type Reader = Pick<ShardStreamState, 'shardCount' | 'seed' | 'consumer' | 'consumers' | 'shuffleShards' | 'uneven' | 'plan'>;

/** The pieces `reader` reads in `epoch`, in reading order. */
export function piecesFor(reader: Reader, epoch: number): ShardPiece[] {
  const planned = reader.plan?.find((p) => p.epoch === epoch);
  if (planned) return planned.pieces;
  const indices = Array.from({ length: reader.shardCount }, (_, i) => i);
  const order = reader.shuffleShards === false ? indices : shuffledEpoch(indices, reader.seed, epoch);
  return partitionList(order, { consumer: reader.consumer, consumers: reader.consumers, uneven: reader.uneven ?? 'exact' }).map((i) => [
    i,
    0,
  ]);
}

/** The first sample number a piece wants at or after `cursor`, or −1 when it wants none. */
export function firstWanted(piece: ShardPiece, cursor: number): number {
  const [, from, ...samples] = piece;
  for (const s of samples) if (s >= cursor && (from < 0 || s < from)) return s;
  return from < 0 ? -1 : Math.max(from, cursor);
}

/** Whether a piece includes sample number `at`. */
export function wants(piece: ShardPiece, at: number): boolean {
  if (piece[1] >= 0 && at >= piece[1]) return true;
  for (let i = 2; i < piece.length; i++) if (piece[i] === at) return true;
  return false;
}

/** The last sample number a piece wants (Infinity when it runs to the shard's end). */
export function lastWanted(piece: ShardPiece): number {
  return piece[1] >= 0 ? Infinity : Math.max(-1, ...(piece.slice(2) as number[]));
}

/** What `state` had not yet delivered of its own epoch: buffered samples, then the unread rest. */
function unread(state: ShardStreamState): ShardPiece[] {
  const list = piecesFor(state, state.epoch);
  const buffered = new Map<number, number[]>();
  for (const [position, sample] of state.buffer) {
    const samples = buffered.get(position) ?? [];
    samples.push(sample);
    buffered.set(position, samples);
  }
  const out: ShardPiece[] = [];
  for (const [position, piece] of list.entries()) {
    const held = buffered.get(position) ?? [];
    if (position > state.shard) out.push(piece);
    else if (position < state.shard) {
      if (held.length > 0) out.push([piece[0], -1, ...held.sort((a, b) => a - b)]);
    } else {
      const [shard, from, ...samples] = piece;
      const restFrom = from < 0 ? -1 : Math.max(from, state.sample);
      const rest = samples.filter((s) => s >= state.sample && (restFrom < 0 || s < restFrom));
      const all = [...new Set([...held, ...rest])].sort((a, b) => a - b);
      if (restFrom >= 0 || all.length > 0) out.push([shard, restFrom, ...all]);
    }
  }
  return out;
}

export interface RegroupOptions {
  /** Samples in each shard (a shards.json's `samples`), to balance the new consumers' shares by samples. Without it every unread shard counts as `assumedShardSamples`. */
  shardSamples?: readonly number[];
  /** Default 1000. */
  assumedShardSamples?: number;
}

/**
 * Elastic resumption: the states of all `n` consumers of a shard stream (one per rank × worker,
 * each taken after the last item that consumer's training consumed) become `consumers` states that
 * together deliver every sample the old ones had not, exactly once. Each new consumer continues with
 * `ShardStream.fromState(shards, states[c])`. The epochs the old consumers were in are finished
 * from pieces dealt out greedily by sample count; later epochs split the shards among the new
 * consumers as a fresh run would.
 *
 * @experimental New in this release: the shape of a regrouped state (`plan`) may still change.
 */
export function regroupShardStates(
  states: readonly ShardStreamState[],
  consumers: number,
  options: RegroupOptions = {},
): ShardStreamState[] {
  const [first, ...rest] = checkComplete(states);
  const sorted = [first, ...rest];
  if (!Number.isInteger(consumers) || consumers < 1)
    throw new DatasetError('state-mismatch', `regroup: consumers must be a positive integer, got ${consumers}`);
  const sizeOf = (shard: number) => options.shardSamples?.[shard] ?? options.assumedShardSamples ?? 1000;
  const weight = ([shard, from, ...samples]: ShardPiece) => samples.length + (from < 0 ? 0 : Math.max(0, sizeOf(shard) - from));
  const startEpoch = Math.min(...sorted.map((s) => s.epoch));
  // Epochs a previous regroup planned are partial too: they stay planned up to the last of them.
  const endEpoch = Math.max(...sorted.flatMap((s) => [s.epoch, ...(s.plan ?? []).map((p) => p.epoch)]));
  const plans = Array.from({ length: consumers }, () => [] as PlannedEpoch[]);
  for (let epoch = startEpoch; epoch <= endEpoch; epoch++) {
    const pieces: ShardPiece[] = [];
    for (const state of sorted) {
      if (epoch === state.epoch) pieces.push(...unread(state));
      else if (epoch > state.epoch) pieces.push(...piecesFor(state, epoch));
    }
    const shares = Array.from({ length: consumers }, () => ({ pieces: [] as ShardPiece[], load: 0 }));
    for (const piece of pieces) {
      const lightest = shares.reduce((a, b) => (b.load < a.load ? b : a));
      lightest.pieces.push(piece);
      lightest.load += weight(piece);
    }
    for (const [c, share] of shares.entries()) plans[c]?.push({ epoch, pieces: share.pieces });
  }
  return plans.map((plan, consumer) => ({
    kind: 'tandem.shards',
    version: 2,
    shardCount: first.shardCount,
    seed: first.seed,
    consumer,
    consumers,
    ...(first.shuffleShards === false ? { shuffleShards: false as const } : {}),
    ...(first.source === undefined ? {} : { source: first.source }),
    epoch: startEpoch,
    shard: 0,
    sample: 0,
    draws: 0,
    buffer: [],
    plan,
  }));
}

/** The states sorted by consumer, after checking they are one whole stream's. */
function checkComplete(states: readonly ShardStreamState[]): [ShardStreamState, ...ShardStreamState[]] {
  const [first] = states;
  if (first === undefined) throw new DatasetError('state-mismatch', 'regroup: no states given');
  for (const s of states)
    if (s?.kind !== 'tandem.shards' || (s.version !== 1 && s.version !== 2))
      throw new DatasetError('not-a-state', 'regroup: not a tandem shard stream state');
  const differ = (name: 'shardCount' | 'seed' | 'consumers', s: ShardStreamState) =>
    s[name] !== first[name] ? `${name} ${first[name]} → ${s[name]}` : undefined;
  for (const s of states) {
    const why = differ('shardCount', s) ?? differ('seed', s) ?? differ('consumers', s);
    if (why) throw new DatasetError('state-mismatch', `regroup: the states are of different streams (${why})`);
    if (s.uneven !== undefined)
      throw new DatasetError(
        'state-mismatch',
        `regroup: a stream with uneven '${s.uneven}' repeats or drops samples; only 'exact' can be regrouped`,
      );
    if ((s.shuffleShards === false) !== (first.shuffleShards === false))
      throw new DatasetError('state-mismatch', 'regroup: the states are of different streams (shuffleShards)');
  }
  if (states.length !== first.consumers)
    throw new DatasetError('state-mismatch', `regroup: the stream had ${first.consumers} consumers, ${states.length} states were given`);
  const [lowest, ...others] = [...states].sort((a, b) => a.consumer - b.consumer);
  const sorted: [ShardStreamState, ...ShardStreamState[]] = [lowest ?? first, ...others];
  sorted.forEach((s, i) => {
    if (s.consumer !== i)
      throw new DatasetError('state-mismatch', `regroup: consumer ${i}'s state is missing (two states of consumer ${s.consumer})`);
  });
  return sorted;
}
