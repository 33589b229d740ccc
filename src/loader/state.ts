// Where a loader stands, as plain JSON a checkpoint can hold: for a list source, the sampler's
// state (seeded order, this rank's share, epoch and offset) at the consumer's position; for a
// stream, how many of its items were done with. A loader made with `resumeFrom` continues there.
import { InternalError, OptionError } from '../errors/index.ts';
import { DistributedSampler, type SamplerState, type ShardStreamState } from '../sources/index.ts';
import type { LabelledSource } from './sources.ts';

export interface LoaderState {
  kind: 'tandem.loader';
  version: 1;
  /** List sources: the sampler at the consumer's position. */
  sampler?: SamplerState;
  /** List sources: the epoch the pass in progress ends before (a resumed pass ends there too). */
  until?: number;
  /** Stream sources: items of the stream done with. */
  streamed?: number;
  /** Shard sources: the shard stream's own state at the consumer's position. */
  shards?: ShardStreamState;
}

/** One item of a pass, with the epoch it belongs to (for its random crop). */
export interface PassItem extends LabelledSource {
  readonly epoch: number;
}

export interface PassOrder {
  /** The items of `epochs` epochs from `epoch`, `offset` items in; also reports each as yielded. */
  items(epoch: number, offset: number, epochs: number, yielded: (key: string) => void): Iterable<PassItem> | AsyncIterable<PassItem>;
  /** The state at `step` items from the start of epoch 0, in a pass that ends before epoch `until`. */
  state(step: number, until: number | undefined): LoaderState;
  /** Items per epoch of this rank (undefined for a stream). */
  readonly perEpoch: number | undefined;
  /** Shard sources: continue from the stream's saved state (checked against this source). */
  resume?(state: ShardStreamState): void;
}

export function listOrder(
  list: readonly LabelledSource[],
  o: { seed: number; shuffle: boolean; rank: number | undefined; worldSize: number | undefined },
): PassOrder {
  const sampler = new DistributedSampler({
    size: list.length,
    seed: o.seed,
    shuffle: o.shuffle,
    ...(o.rank === undefined ? {} : { rank: o.rank }),
    ...(o.worldSize === undefined ? {} : { worldSize: o.worldSize }),
    epochs: Infinity,
  });
  return {
    perEpoch: sampler.perEpoch,
    *items(epoch, offset, epochs, yielded) {
      const end = epoch + epochs;
      for (let e = epoch; e < end; e++) {
        for (let k = e === epoch ? offset : 0; k < sampler.perEpoch; k++) {
          const item = list[sampler.indexAt(e, k)];
          if (item === undefined) throw new InternalError(`the sampler gave an index past the list (${list.length} items)`);
          yielded(item.key);
          yield { key: item.key, label: item.label, read: item.read, ...(item.open ? { open: item.open } : {}), epoch: e };
        }
      }
    },
    state: (step, until) => ({
      kind: 'tandem.loader',
      version: 1,
      sampler: sampler.state(step),
      ...(until === undefined ? {} : { until }),
    }),
  };
}

export function streamOrder(stream: AsyncIterable<LabelledSource> | Iterable<LabelledSource>): PassOrder {
  let used = false;
  return {
    perEpoch: undefined,
    async *items(epoch, offset, _epochs, yielded) {
      if (used)
        throw new OptionError(
          'loader',
          'source',
          stream,
          'a list (folder, files, URLs) to be read more than once; an iterable is read once',
        );
      used = true;
      let index = 0;
      for await (const item of stream) {
        if (index++ < offset) continue;
        yielded(item.key);
        yield { key: item.key, label: item.label, read: item.read, ...(item.open ? { open: item.open } : {}), epoch };
      }
    },
    state: (step) => ({ kind: 'tandem.loader', version: 1, streamed: step }),
  };
}

/** The epoch and offset a state names, checked against this loader's order. */
export function startOf(state: LoaderState, order: PassOrder): { epoch: number; offset: number; until: number | undefined } {
  if (state.version !== 1) throw new OptionError('loader options', 'resumeFrom', state, 'a state from loader.state() of this version');
  if (order.resume) {
    if (typeof state.shards !== 'object' || state.shards === null)
      throw new OptionError('loader options', 'resumeFrom', state, "a shard source's state");
    order.resume(state.shards);
    return { epoch: 0, offset: 0, until: undefined };
  }
  if (order.perEpoch === undefined) {
    if (typeof state.streamed !== 'number') throw new OptionError('loader options', 'resumeFrom', state, "a stream source's state");
    return { epoch: 0, offset: state.streamed, until: undefined };
  }
  return listStartOf(state, order, 'loader options');
}

/**
 * A list source's epoch and offset from a state's sampler, checked against this loader's order
 * (the same source size, seed, shuffle and rank): loader() and videoLoader() (`where` names it).
 */
export function listStartOf(
  state: { sampler?: SamplerState; until?: number },
  order: PassOrder,
  where: string,
): { epoch: number; offset: number; until: number | undefined } {
  const s = state.sampler;
  if (s === undefined) throw new OptionError(where, 'resumeFrom', state, "a list source's state");
  const fresh = order.state(0, undefined).sampler;
  const differs = (['size', 'seed', 'shuffle', 'consumer', 'consumers'] as const).filter((k) => s[k] !== fresh?.[k]);
  if (differs.length > 0)
    throw new OptionError(
      where,
      'resumeFrom',
      state,
      `the state of a loader over the same source and settings (differs in ${differs.map((k) => `${k}: ${s[k]} → ${fresh?.[k]}`).join(', ')})`,
    );
  const until = typeof state.until === 'number' && state.until > s.epoch ? state.until : undefined;
  return { epoch: s.epoch, offset: s.offset, until };
}
