// `loader({ shards: [...] })`: WebDataset tar shards (as `tandem shards` writes them: `<key>.<image
// ext>` + `<key>.cls`), local paths or URLs, streamed by ShardStream: per epoch a seeded shard
// order, this rank's share, a seeded shuffle buffer. The loader never holds the dataset; its
// position is the stream's own small JSON state.
import { OptionError } from '../errors/index.ts';
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
import type { LabelledSource, ShardSource } from './sources.ts';
import type { LoaderState, PassItem, PassOrder } from './state.ts';

const IMAGE_EXTENSIONS = ['jpg', 'jpeg', 'png', 'webp', 'bmp', 'gif'];

/** A sample of a shard item stream as a labelled source; a lost sample is one whose read() rejects with why. */
export async function* shardSamples(stream: AsyncIterable<ShardItem>): AsyncGenerator<LabelledSource & { epoch: number }> {
  for await (const item of stream) {
    const key = `${item.shard}#${item.key}`;
    if (isFailure(item)) {
      const error = item.error;
      yield { key, label: -1, epoch: item.epoch, read: () => Promise.reject(error) };
      continue;
    }
    const bytes = IMAGE_EXTENSIONS.map((e) => item.files[e]).find((b) => b !== undefined);
    const cls = item.files.cls;
    const label = cls ? Number(new TextDecoder().decode(cls).trim()) : Number.NaN;
    if (bytes === undefined || !Number.isInteger(label) || label < 0) {
      const why = new SourceError(
        'unsupported-type',
        key,
        `${key}: a sample needs an image member (${IMAGE_EXTENSIONS.join('/')}) and a numeric .cls`,
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

/**
 * The order of a shard source: one stream over all `epochs`, read once. `resume` takes a saved
 * state before the stream starts; counts (state(step)) are items since the stream started.
 */
export function shardOrder(
  source: ShardSource,
  o: { seed: number; shuffle: boolean; epochs: number; rank: number | undefined; worldSize: number | undefined; fetch: FetchOptions },
): PassOrder & { resume(state: ShardStreamState): void } {
  const bufferSize = source.shuffleBuffer ?? 256;
  if (!Number.isInteger(bufferSize) || bufferSize < 1)
    throw new OptionError('loader', 'source.shuffleBuffer', bufferSize, 'a positive integer');
  if (source.shards.length === 0 || source.shards.some((s) => typeof s !== 'string'))
    throw new OptionError('loader', 'source.shards', source.shards, 'a non-empty list of shard paths or URLs');
  const options: ShardStreamOptions = {
    seed: o.seed,
    epochs: o.epochs,
    shuffleShards: o.shuffle,
    bufferSize: o.shuffle ? bufferSize : 0,
    fetch: o.fetch,
    ...(o.rank === undefined ? {} : { rank: o.rank }),
    ...(o.worldSize === undefined ? {} : { worldSize: o.worldSize }),
  };
  let from: ShardStreamState | undefined;
  let stream: ShardStream | undefined;
  return {
    perEpoch: undefined,
    resume(state) {
      checkShardResume(state, {
        seed: o.seed,
        shardCount: source.shards.length,
        options,
        where: 'loader options',
        regroup: 'regroupShardStates',
      });
      from = state;
    },
    async *items(_epoch, _offset, _epochs, yielded): AsyncGenerator<PassItem> {
      if (stream)
        throw new OptionError(
          'loader',
          'source',
          source,
          'read once: its epochs are the loader’s `epochs`; make another loader to read it again',
        );
      stream = from ? ShardStream.fromState(source.shards, from, options) : new ShardStream(source.shards, options);
      for await (const item of shardSamples(stream)) {
        yielded(item.key);
        yield item;
      }
    },
    state(step): LoaderState {
      const shards = stream ? stream.stateAt(step) : (from ?? new ShardStream(source.shards, options).state());
      return { kind: 'tandem.loader', version: 1, shards };
    },
  };
}
