// `loader({ shards: [...] })`: WebDataset tar shards (as `tandem shards` writes them: `<key>.<image
// ext>` + `<key>.cls`), local paths or URLs, streamed by ShardStream: per epoch a seeded shard
// order, this rank's share, a seeded shuffle buffer. The loader never holds the dataset; its
// position is the stream's own small JSON state.
import { InternalError, OptionError } from '../errors/index.ts';
import {
  isFailure,
  resolvePartition,
  ShardStream,
  SourceError,
  type FetchOptions,
  type ShardItem,
  type ShardStreamOptions,
  type ShardStreamState,
} from '../sources/index.ts';
import type { ParquetShards } from './parquet.ts';
import { ROW_DATA } from './parquet-source.ts';
import type { LabelledSource, ShardSource } from './sources.ts';
import type { LoaderState, PassItem, PassOrder } from './state.ts';

const IMAGE_EXTENSIONS = ['jpg', 'jpeg', 'png', 'webp', 'bmp', 'gif'];

/** How a shard names its samples and where their bytes are: tar members by extension, or a Parquet row's data. */
export interface SampleLayout {
  /** The key of sample `key` of `shard` in failure reports and batches. */
  keyOf(shard: string, key: string): string;
  /** The members that may hold the bytes, in order of preference. */
  members: readonly string[];
  /** A sample without a `.cls` member is unlabelled (-1), not lost: a Parquet row of no class. */
  labelOptional?: boolean;
}

const TAR_LAYOUT: SampleLayout = { keyOf: (shard, key) => `${shard}#${key}`, members: IMAGE_EXTENSIONS };

/** A Parquet row group's rows: keyed `file#row`, the image in the row's data member. */
export const PARQUET_LAYOUT: SampleLayout = {
  keyOf: (shard, key) => `${shard.slice(0, shard.lastIndexOf('#rowgroup='))}#${key}`,
  members: [ROW_DATA],
  labelOptional: true,
};

/** A sample of a shard item stream as a labelled source; a lost sample is one whose read() rejects with why. */
export async function* shardSamples(
  stream: AsyncIterable<ShardItem>,
  layout: SampleLayout = TAR_LAYOUT,
): AsyncGenerator<LabelledSource & { epoch: number }> {
  for await (const item of stream) {
    const key = layout.keyOf(item.shard, item.key);
    if (isFailure(item)) {
      const error = item.error;
      yield { key, label: -1, epoch: item.epoch, read: () => Promise.reject(error) };
      continue;
    }
    const bytes = layout.members.map((e) => item.files[e]).find((b) => b !== undefined);
    const cls = item.files.cls;
    const label = cls ? Number(new TextDecoder().decode(cls).trim()) : layout.labelOptional ? -1 : Number.NaN;
    if (bytes === undefined || !Number.isInteger(label) || (label < 0 && cls !== undefined)) {
      const why = new SourceError(
        'unsupported-type',
        key,
        `${key}: a sample needs an image member (${layout.members.join('/')}) and a numeric .cls`,
      );
      yield { key, label: -1, epoch: item.epoch, read: () => Promise.reject(why) };
      continue;
    }
    yield { key, label, epoch: item.epoch, read: () => Promise.resolve(bytes) };
  }
}

/**
 * Refuses a saved shard-stream state of another seed, shard list or rank (a world-size change goes
 * through `regroup`, named in the message).
 */
export function checkShardResume(
  state: ShardStreamState,
  here: { seed: number; shardCount: number; options: ShardStreamOptions; where: string; regroup: string },
): void {
  const part = resolvePartition(here.options);
  const differs = [
    state.seed !== here.seed && `seed ${state.seed} → ${here.seed}`,
    state.shardCount !== here.shardCount && `shards ${state.shardCount} → ${here.shardCount}`,
    (state.consumer !== part.consumer || state.consumers !== part.consumers) &&
      `rank ${state.consumer} of ${state.consumers} → ${part.consumer} of ${part.consumers} (regroup with ${here.regroup})`,
  ].filter(Boolean);
  if (differs.length > 0)
    throw new OptionError(here.where, 'resumeFrom', state, `the state of a loader over the same shards (differs in ${differs.join(', ')})`);
}

/** What a shard order is made from: the shard names, and how they are read. */
export interface ShardSpec {
  shards: readonly string[];
  /** The option path of the list in messages ('source.shards', 'source.tokens'). */
  field: string;
  shuffleBuffer: number | undefined;
  /** Tar members (default), token shards, or a Parquet source's row groups. */
  format?: ShardStreamOptions['format'];
  parquet?: ParquetShards;
  /** Token shards: how an llm.c shard splits into documents, and the limits (ShardStreamOptions.tokenShards). */
  tokenShards?: ShardStreamOptions['tokenShards'];
}

/** The order a loader's settings ask of a shard stream. */
export interface ShardOrderOptions {
  seed: number;
  shuffle: boolean;
  epochs: number;
  rank: number | undefined;
  worldSize: number | undefined;
  fetch: FetchOptions;
}

/**
 * The order of a shard source, for every loader: one stream over all `epochs`, read once, resumed
 * from its own state (checked against this source: seed, shards, rank, and for Parquet the files
 * and columns). `stream()` starts it; `state(step)` counts items since the stream started.
 */
export function shardStreamOrder(
  spec: ShardSpec,
  o: ShardOrderOptions,
  where: { loader: string; regroup: string },
): { order: PassOrder & { resume(state: ShardStreamState): void }; stream(): ShardStream } {
  const { shards, parquet } = spec;
  const bufferSize = spec.shuffleBuffer ?? 256;
  if (!Number.isInteger(bufferSize) || bufferSize < 1)
    throw new OptionError(where.loader, 'source.shuffleBuffer', bufferSize, 'a positive integer');
  if (shards.length === 0 || shards.some((s) => typeof s !== 'string'))
    throw new OptionError(where.loader, spec.field, shards, 'a non-empty list of shard paths or URLs');
  const options: ShardStreamOptions = {
    ...(spec.format === undefined ? {} : { format: spec.format }),
    seed: o.seed,
    epochs: o.epochs,
    shuffleShards: o.shuffle,
    bufferSize: o.shuffle ? bufferSize : 0,
    fetch: o.fetch,
    ...(o.rank === undefined ? {} : { rank: o.rank }),
    ...(o.worldSize === undefined ? {} : { worldSize: o.worldSize }),
    ...parquetStreamOptions(parquet),
    ...(spec.tokenShards === undefined ? {} : { tokenShards: spec.tokenShards }),
  };
  let from: ShardStreamState | undefined;
  /** The stream started, until a resume sets it aside: the next stream() then starts from `from`. */
  let stream: ShardStream | undefined;
  const order: PassOrder & { resume(state: ShardStreamState): void } = {
    perEpoch: undefined,
    resume(state) {
      if (parquet && state.source !== parquet.fingerprint)
        throw new OptionError(
          `${where.loader} options`,
          'resumeFrom',
          state,
          'the state of a loader over the same Parquet files and columns (this one was taken over other files, columns or row groups)',
        );
      checkShardResume(state, {
        seed: o.seed,
        shardCount: shards.length,
        options,
        where: `${where.loader} options`,
        regroup: where.regroup,
      });
      from = state;
      // The next stream() starts from `from`, and until then state() is `from`.
      stream = undefined;
    },
    items: () => {
      throw new InternalError('a shard order is read through its stream()');
    },
    state(step): LoaderState {
      const state = stream ? stream.stateAt(step) : (from ?? new ShardStream(shards, options).state());
      return { kind: 'tandem.loader', version: 1, shards: parquet ? { ...state, source: parquet.fingerprint } : state };
    },
  };
  return {
    order,
    stream() {
      if (stream)
        throw new OptionError(
          where.loader,
          'source',
          shards,
          "read once: its epochs are the loader's `epochs`; make another loader to read it again",
        );
      stream = from ? ShardStream.fromState(shards, from, options) : new ShardStream(shards, options);
      return stream;
    },
  };
}

/** The image loader's order of a shard or Parquet source: samples as labelled items. */
export function shardOrder(
  source: ShardSource | ParquetShards,
  o: ShardOrderOptions,
): PassOrder & { resume(state: ShardStreamState): void } {
  const parquet = 'reader' in source ? source : undefined;
  const { order, stream } = shardStreamOrder(
    { shards: source.shards, field: 'source.shards', shuffleBuffer: source.shuffleBuffer, ...(parquet ? { parquet } : {}) },
    o,
    { loader: 'loader', regroup: 'regroupShardStates' },
  );
  const layout = parquet ? PARQUET_LAYOUT : undefined;
  return {
    ...order,
    async *items(_epoch, _offset, _epochs, yielded): AsyncGenerator<PassItem> {
      for await (const item of shardSamples(stream(), layout)) {
        yielded(item.key);
        yield item;
      }
    },
  };
}

/** What a shard stream over a Parquet source's row groups needs: its reader and its read-ahead hint. */
export function parquetStreamOptions(parquet: ParquetShards | undefined): Pick<ShardStreamOptions, 'reader' | 'prefetch'> {
  return parquet ? { reader: parquet.reader, prefetch: parquet.prefetch } : {};
}
