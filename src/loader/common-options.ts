// The options every loader takes (loader(), videoLoader(), textLoader()), declared and checked in
// one place: how many per batch, the order (shuffle, seed, epochs, this rank's share), failures,
// reading, the stop signal and the statistics' name for the consumer. Each medium adds its own.
import { OptionChecker } from '../errors/index.ts';
import type { FailureBudget } from '../pipeline/index.ts';
import type { FetchOptions } from '../sources/index.ts';

export interface CommonLoaderOptions {
  /** Items per batch (default: the medium's; images 32, clips 8, token rows 8). The last batch may be smaller. */
  batchSize?: number;
  /** Seeded shuffle per epoch (default false). */
  shuffle?: boolean;
  /** Seed of the shuffle and every per-item draw (crops, clips) (default 0). */
  seed?: number;
  /** Epochs one `for await` runs through (default 1); batches run across epoch boundaries. */
  epochs?: number;
  /** This process's rank and the number of ranks (default $RANK and $WORLD_SIZE, else 0 and 1). */
  rank?: number;
  worldSize?: number;
  /** When the run stops for failed items (default: more than half failed, from 64 items on). */
  failureBudget?: FailureBudget;
  /** Files read at once (default: the medium's; 16, videos 8 since each is held whole). */
  readConcurrency?: number;
  /** Retries, time limits and headers for URL sources. */
  fetch?: FetchOptions;
  /** Stops the loader (as close() does). */
  signal?: AbortSignal;
  /** How the statistics name the loop that takes the batches (default 'consumer'; e.g. 'training loop'). */
  consumer?: string;
}

export interface CommonLoaderSettings {
  batchSize: number;
  shuffle: boolean;
  seed: number;
  epochs: number;
  rank: number | undefined;
  worldSize: number | undefined;
  failureBudget: FailureBudget;
  readConcurrency: number;
  fetch: FetchOptions;
  signal: AbortSignal | undefined;
  consumer: string;
}

/** The common fields' names, for a medium's list of known options. */
export const COMMON_OPTIONS = [
  'batchSize',
  'shuffle',
  'seed',
  'epochs',
  'rank',
  'worldSize',
  'failureBudget',
  'readConcurrency',
  'fetch',
  'signal',
  'consumer',
] as const;

/** Checks the common fields of `o` (an OptionError names a bad one), with the medium's defaults. */
export function checkCommonOptions(o: OptionChecker, defaults: { batchSize: number; readConcurrency: number }): CommonLoaderSettings {
  const worldSize = o.optionalInteger('worldSize', 1);
  const consumer = o.raw('consumer') ?? 'consumer';
  if (typeof consumer !== 'string' || consumer === '') o.fail('consumer', 'a non-empty string');
  const fetch = o.raw('fetch') ?? {};
  if (typeof fetch !== 'object' || fetch === null || Array.isArray(fetch)) o.fail('fetch', 'an object');
  return {
    batchSize: o.integer('batchSize', defaults.batchSize, 1, 65536),
    shuffle: o.boolean('shuffle', false),
    seed: o.integer('seed', 0, -0x80000000, 0x7fffffff),
    epochs: o.integer('epochs', 1),
    rank: o.optionalInteger('rank', 0, worldSize === undefined ? Number.MAX_SAFE_INTEGER : worldSize - 1),
    worldSize,
    failureBudget: checkBudget(o),
    readConcurrency: o.integer('readConcurrency', defaults.readConcurrency, 1, 1024),
    fetch: fetch as FetchOptions,
    signal: o.signal(),
    consumer: consumer as string,
  };
}

export function checkBudget(o: OptionChecker): FailureBudget {
  const budget = o.raw('failureBudget');
  if (budget === undefined) return { maxFailureRate: 0.5, minItems: 64 };
  const inner = new OptionChecker(`${o.where}.failureBudget`, budget, ['maxFailures', 'maxFailureRate', 'minItems']);
  const out: FailureBudget = {};
  const maxFailures = inner.optionalInteger('maxFailures', 0);
  if (maxFailures !== undefined) out.maxFailures = maxFailures;
  if (inner.raw('maxFailureRate') !== undefined) out.maxFailureRate = inner.number('maxFailureRate', 0, 0, 1);
  const minItems = inner.optionalInteger('minItems', 0);
  if (minItems !== undefined) out.minItems = minItems;
  return out;
}
