// Elastic resumption of shard streams: consumers stopped at random points (each reading ahead of
// what it consumed, as a pipeline does) are regrouped into a different number of consumers, which
// finish the epochs. Across the cut, every sample of every epoch is delivered exactly once.
// Runtime-neutral; shards are served from memory.
import { hash3 } from '../../src/random/index.ts';
import {
  DatasetError,
  isFailure,
  regroupShardStates,
  ShardStream,
  type ShardItem,
  type ShardStreamOptions,
  type ShardStreamState,
} from '../../src/sources/index.ts';
import { check } from './assert.ts';
import { memoryShards } from './sources-sampling-scenarios.ts';

const tag = (item: ShardItem) => `${item.epoch}:${isFailure(item) ? `!${item.key}` : item.key}`;

/**
 * Runs `stream` until it has delivered `consumed` + `ahead` items (or ends); returns the tags of
 * the first `consumed` and the JSON state after them, as a checkpoint of a loader that read ahead.
 */
async function consume(stream: ShardStream, consumed: number, ahead: number): Promise<{ tags: string[]; state: ShardStreamState }> {
  const tags: string[] = [];
  if (consumed + ahead > 0) {
    for await (const item of stream) {
      tags.push(tag(item));
      if (tags.length >= consumed + ahead) break;
    }
  }
  const kept = Math.min(consumed, tags.length);
  return { tags: tags.slice(0, kept), state: JSON.parse(JSON.stringify(stream.stateAt(kept))) as ShardStreamState };
}

/** Checks that `tags` hold every sample of each of `epochs` epochs exactly once. */
function checkExactlyOnce(tags: string[], everything: string[], epochs: number, what: string): void {
  const counts = new Map<string, number>();
  for (const t of tags) counts.set(t, (counts.get(t) ?? 0) + 1);
  for (let e = 0; e < epochs; e++) {
    for (const key of everything) {
      const n = counts.get(`${e}:${key}`) ?? 0;
      check(n === 1, `${what}: epoch ${e} sample ${key} delivered ${n} times`);
    }
  }
  check(tags.length === everything.length * epochs, `${what}: ${tags.length} deliveries for ${everything.length * epochs} samples`);
}

export const elasticScenarios: Record<string, () => Promise<void>> = {
  async 'regrouped to more or fewer consumers, twice, every sample of every epoch is delivered exactly once'() {
    const shardCount = 11;
    const perShard = 7;
    const { names, open } = memoryShards(shardCount, perShard);
    const everything = names.flatMap((_, s) =>
      Array.from({ length: perShard }, (_, i) => `s${String(s).padStart(3, '0')}-${String(i).padStart(4, '0')}`),
    );
    const shardSamples = names.map(() => perShard);
    for (let seed = 0; seed < 40; seed++) {
      const epochs = 2 + (seed % 2);
      const worlds = [1 + (hash3(seed, 1) % 4), 1 + (hash3(seed, 2) % 5), 1 + (hash3(seed, 3) % 3)];
      const base: ShardStreamOptions = { open, seed, epochs, bufferSize: [0, 3, 9, 40][seed % 4]! };
      const what = `seed ${seed}, consumers ${worlds.join(' → ')}, buffer ${base.bufferSize}`;
      const delivered: string[] = [];
      // The first generation: fresh streams, each stopped somewhere in its first or second epoch.
      let states: ShardStreamState[] = [];
      for (let c = 0; c < worlds[0]!; c++) {
        const stream = new ShardStream(names, { ...base, rank: c, worldSize: worlds[0] });
        const perEpoch = stream.shardsFor(0).length * perShard;
        const stop = hash3(seed, c, 7) % (perEpoch * epochs + 1);
        const { tags, state } = await consume(stream, stop, hash3(seed, c, 8) % 6);
        delivered.push(...tags);
        states.push(state);
      }
      // The second generation resumes the regrouped states and is stopped again; the third finishes.
      for (const [generation, world] of [worlds[1]!, worlds[2]!].entries()) {
        const regrouped = regroupShardStates(states, world, { shardSamples });
        check(regrouped.length === world, `${what}: ${regrouped.length} states`);
        states = [];
        const counts: number[] = [];
        for (const [c, state] of regrouped.entries()) {
          const stream = ShardStream.fromState(names, JSON.parse(JSON.stringify(state)) as ShardStreamState, { open, epochs });
          const last = generation === 1;
          const stop = last ? Infinity : hash3(seed, c, 9) % (perShard * shardCount);
          const { tags, state: after } = await consume(stream, stop, last ? 0 : hash3(seed, c, 10) % 6);
          delivered.push(...tags);
          states.push(after);
          counts.push(tags.filter((t) => t.startsWith(`${state.epoch}:`)).length);
        }
        // Dealt out by sample count: no new consumer has more than a shard's worth above another.
        if (generation === 1) check(Math.max(...counts) - Math.min(...counts) <= perShard, `${what}: catch-up shares ${counts.join(', ')}`);
      }
      checkExactlyOnce(delivered, everything, epochs, what);
    }
  },

  async 'a regrouped stream reads only the shards that hold what it was given'() {
    const { names, open, opens } = memoryShards(8, 5);
    // Consumer 0 of 2 stops in the middle of its second shard with samples buffered; consumer 1 finished its epoch.
    const a = await consume(new ShardStream(names, { open, seed: 3, bufferSize: 4, rank: 0, worldSize: 2 }), 7, 3);
    const b = await consume(new ShardStream(names, { open, seed: 3, bufferSize: 4, rank: 1, worldSize: 2 }), 20, 0);
    const [only] = regroupShardStates([a.state, b.state], 1);
    const unreadShards = 4 - a.state.shard - 1; // after the one being read
    opens.clear();
    const rest: string[] = [];
    for await (const item of ShardStream.fromState(names, only!, { open })) rest.push(tag(item));
    const opened = [...opens.values()].reduce((n, v) => n + v, 0);
    const held = new Set(a.state.buffer.map(([p]) => p)).add(a.state.shard).size;
    check(opened <= unreadShards + held, `${opened} shard opens, at most ${unreadShards + held} needed`);
    check(rest.length === 40 - 7 - 20, `${rest.length} samples left, expected 13`);
    check(new Set([...a.tags, ...b.tags, ...rest]).size === 40, 'every sample once');
  },

  async 'a position with a full 256-sample shuffle buffer is small JSON (docs/resume.md: under 3 KB)'() {
    const { names, open } = memoryShards(200, 60);
    const stream = new ShardStream(names, { open, seed: 1, bufferSize: 256 });
    let n = 0;
    for await (const _ of stream) if (++n === 3000) break;
    const state = stream.stateAt(3000);
    const bytes = JSON.stringify(state).length;
    check(state.buffer.length === 255 && bytes < 3000, `${state.buffer.length} buffered, ${bytes} bytes`);
  },

  async 'regrouping refuses states that are not one whole stream, with the difference named'() {
    const { names, open } = memoryShards(4, 3);
    const state = (options: ShardStreamOptions) => new ShardStream(names, { open, ...options }).state();
    const cases: Array<[string, () => unknown, string]> = [
      ['no states', () => regroupShardStates([], 2), 'no states'],
      ['a consumer missing', () => regroupShardStates([state({ rank: 0, worldSize: 2 })], 2), '2 consumers, 1 states'],
      [
        'two of one consumer',
        () => regroupShardStates([state({ rank: 0, worldSize: 2 }), state({ rank: 0, worldSize: 2 })], 2),
        "consumer 1's state is missing",
      ],
      [
        'different seeds',
        () => regroupShardStates([state({ rank: 0, worldSize: 2, seed: 1 }), state({ rank: 1, worldSize: 2, seed: 2 })], 2),
        'seed 1 → 2',
      ],
      ['padded partition', () => regroupShardStates([state({ uneven: 'pad' })], 2), "uneven 'pad'"],
      ['no consumers', () => regroupShardStates([state({})], 0), 'positive integer'],
      ['not a state', () => regroupShardStates([{ kind: 'tandem.mix' } as unknown as ShardStreamState], 1), 'not a tandem shard'],
      ['other shard list', () => ShardStream.fromState(names.slice(1), regroupShardStates([state({})], 2)[0]!), 'state is for 4 shards'],
    ];
    for (const [what, run, words] of cases) {
      let error: unknown;
      try {
        run();
      } catch (e) {
        error = e;
      }
      check(error instanceof DatasetError && error.message.includes(words), `${what}: ${String(error)}`);
    }
  },
};
