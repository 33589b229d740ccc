// Splitting one epoch's items over ranks (and each rank's workers), as PyTorch's DistributedSampler
// does: positions rank, rank + world, rank + 2·world ... of the epoch's (shuffled) order. Pure index
// arithmetic, so a rank never materialises another rank's share.
import { env } from '../runtime/index.ts';

/**
 * What to do when the item count does not divide by the number of consumers:
 * - 'exact': every item exactly once; the first `total % world` consumers get one item more;
 * - 'pad': every consumer gets ceil(total / world) items, the shortfall repeating the epoch's
 *   first items (DistributedSampler's default, drop_last=False);
 * - 'drop': every consumer gets floor(total / world) items; the epoch's last `total % world` items
 *   are skipped this epoch (drop_last=True; a shuffle makes them different ones each epoch).
 */
export type UnevenMode = 'exact' | 'pad' | 'drop';

export interface PartitionOptions {
  /** This consumer's rank in [0, worldSize). Default: $RANK, else 0. */
  rank?: number;
  /** Number of ranks. Default: $WORLD_SIZE, else 1. */
  worldSize?: number;
  /** Data-loading workers of this rank, and which one this is (a rank's share is split again). */
  workerId?: number;
  numWorkers?: number;
  uneven?: UnevenMode;
}

/** One consumer's place among all consumers of an epoch: rank × workers flattened. */
export interface Partition {
  /** This consumer, in [0, consumers). */
  consumer: number;
  consumers: number;
  uneven: UnevenMode;
}

function nonNegativeInt(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`$${name}=${JSON.stringify(value)} is not a non-negative integer`);
  return n;
}

/**
 * Rank and world size as launchers set them (torchrun, mpirun-style wrappers): RANK, WORLD_SIZE,
 * LOCAL_RANK, LOCAL_WORLD_SIZE. Undefined where unset, and always in browsers (no environment).
 */
export function distributedEnv(): { rank?: number; worldSize?: number; localRank?: number; localWorldSize?: number } {
  return {
    rank: nonNegativeInt(env('RANK'), 'RANK'),
    worldSize: nonNegativeInt(env('WORLD_SIZE'), 'WORLD_SIZE'),
    localRank: nonNegativeInt(env('LOCAL_RANK'), 'LOCAL_RANK'),
    localWorldSize: nonNegativeInt(env('LOCAL_WORLD_SIZE'), 'LOCAL_WORLD_SIZE'),
  };
}

/** Resolves options (falling back to the environment) and checks them. */
export function resolvePartition(options: PartitionOptions = {}): Partition {
  const fromEnv = options.rank === undefined || options.worldSize === undefined ? distributedEnv() : {};
  const rank = options.rank ?? fromEnv.rank ?? 0;
  const worldSize = options.worldSize ?? fromEnv.worldSize ?? 1;
  const workerId = options.workerId ?? 0;
  const numWorkers = options.numWorkers ?? 1;
  const ok = (n: number) => Number.isInteger(n) && n >= 0;
  if (!ok(worldSize) || worldSize < 1 || !ok(rank) || rank >= worldSize)
    throw new RangeError(`rank ${rank} is not in [0, worldSize ${worldSize})`);
  if (!ok(numWorkers) || numWorkers < 1 || !ok(workerId) || workerId >= numWorkers)
    throw new RangeError(`workerId ${workerId} is not in [0, numWorkers ${numWorkers})`);
  return { consumer: rank * numWorkers + workerId, consumers: worldSize * numWorkers, uneven: options.uneven ?? 'exact' };
}

/** How many items one consumer gets out of `total`. */
export function partitionLength(total: number, p: Partition): number {
  const { consumer, consumers, uneven } = p;
  if (uneven === 'pad') return total === 0 ? 0 : Math.ceil(total / consumers);
  if (uneven === 'drop') return Math.floor(total / consumers);
  return Math.floor(total / consumers) + (consumer < total % consumers ? 1 : 0);
}

/**
 * The epoch position (0 ≤ result < total) of this consumer's `k`-th item. With 'pad' the positions
 * past the end wrap to the start, as DistributedSampler repeats its first indices.
 */
export function partitionPosition(k: number, total: number, p: Partition): number {
  const position = p.consumer + k * p.consumers;
  return position < total ? position : position % total;
}

/** This consumer's share of a list (e.g. shard URLs), in order. */
export function partitionList<T>(items: readonly T[], p: Partition): T[] {
  const n = partitionLength(items.length, p);
  const out: T[] = new Array<T>(n);
  for (let k = 0; k < n; k++) out[k] = items[partitionPosition(k, items.length, p)]!;
  return out;
}
