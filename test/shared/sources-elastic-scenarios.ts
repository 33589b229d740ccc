// Elastic resumption of shard streams: consumers stopped at random points (each reading ahead of
// what it consumed, as a pipeline does) are regrouped into a different number of consumers, which
// finish the epochs. Across the cut, every sample of every epoch is delivered exactly once: with
// equal and with uneven shards (dealt by `shardSamples`), and around a shard that breaks while it
// is read. Runtime-neutral; shards are served from memory.
import { hash3 } from '../../src/random/index.ts';
import {
  DatasetError,
  isFailure,
  regroupShardStates,
  ShardError,
  ShardStream,
  type ShardFailure,
  type ShardItem,
  type ShardOpener,
  type ShardStreamOptions,
  type ShardStreamState,
} from '../../src/sources/index.ts';
import { check } from './assert.ts';
import { memoryShards, shardEntries } from './sources-sampling-scenarios.ts';
import { streamOf, writeTar } from './tar-helpers.ts';

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

const sampleKey = (shard: number, i: number) => `s${String(shard).padStart(3, '0')}-${String(i).padStart(4, '0')}`;

/**
 * How a shard breaks while it is read: its bytes end inside member `after`'s data (a truncated
 * tar), or the connection errors there (an HTTP body cut, the same on every reopen).
 */
interface ShardFault {
  shard: number;
  after: number;
  how: 'truncated' | 'cut';
}
const CUT_REASON = 'connection reset by the test';

/** Shards of the given sample counts in memory, one of them broken by `fault`. */
function unevenShards(sizes: readonly number[], fault?: ShardFault): { names: string[]; open: ShardOpener } {
  const bytes = sizes.map((n, s) => {
    const whole = writeTar(shardEntries(s, n));
    if (fault?.shard !== s) return whole;
    // The break lands past the header of sample `after`'s first member, inside its data: the
    // samples before it are whole, that one is not.
    const before = writeTar(shardEntries(s, fault.after), { endBlocks: false }).length;
    return whole.subarray(0, before + 512 + 20);
  });
  const names = sizes.map((_, s) => `mem://uneven-${s}.tar`);
  const open: ShardOpener = async (name) => {
    const s = names.indexOf(name);
    check(s >= 0, `no shard ${name}`);
    if (fault?.shard !== s || fault.how === 'truncated') return streamOf(bytes[s]!, 700);
    const cut = bytes[s]!;
    let offset = 0;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= cut.length) return controller.error(new Error(CUT_REASON));
        controller.enqueue(cut.slice(offset, offset + 700));
        offset += 700;
      },
    });
  };
  return { names, open };
}

/** Seeded shard sizes of 1 to 50 samples. */
const unevenSizes = (seed: number, count: number) => Array.from({ length: count }, (_, s) => 1 + (hash3(seed, s, 5) % 50));

interface Generations {
  /** Every item delivered (consumed) across all generations, tagged. */
  delivered: string[];
  /** The failures among them, with the generation that delivered each (0: before any regroup). */
  failures: Array<{ failure: ShardFailure; generation: number }>;
  /** In the last generation, each new consumer's deliveries of the epoch it resumed in. */
  catchUp: number[];
}

/**
 * Three generations of consumers over `names`: fresh streams (`worlds[0]` of them) stopped at
 * seeded random positions with items read ahead, regrouped into `worlds[1]` stopped again, and
 * regrouped into `worlds[2]`, which finish the epochs.
 */
async function threeGenerations(
  names: string[],
  open: ShardOpener,
  sizes: readonly number[],
  seed: number,
  epochs: number,
  worlds: readonly [number, number, number],
  bufferSize: number,
): Promise<Generations> {
  const base: ShardStreamOptions = { open, seed, epochs, bufferSize, reopenRetries: 1 };
  const total = sizes.reduce((a, b) => a + b, 0);
  const out: Generations = { delivered: [], failures: [], catchUp: [] };
  const run = async (stream: ShardStream, generation: number, stop: number, ahead: number) => {
    const items: ShardItem[] = [];
    if (stop + ahead > 0) {
      for await (const item of stream) {
        items.push(item);
        if (items.length >= stop + ahead) break;
      }
    }
    const kept = items.slice(0, Math.min(stop, items.length));
    out.delivered.push(...kept.map(tag));
    for (const item of kept) if (isFailure(item)) out.failures.push({ failure: item, generation });
    return { kept, state: JSON.parse(JSON.stringify(stream.stateAt(kept.length))) as ShardStreamState };
  };
  let states: ShardStreamState[] = [];
  for (let c = 0; c < worlds[0]; c++) {
    const stream = new ShardStream(names, { ...base, rank: c, worldSize: worlds[0] });
    const perEpoch = stream.shardsFor(0).reduce((n, name) => n + sizes[names.indexOf(name)]!, 0);
    states.push((await run(stream, 0, hash3(seed, c, 7) % (perEpoch * epochs + 1), hash3(seed, c, 8) % 6)).state);
  }
  for (const [g, world] of [worlds[1], worlds[2]].entries()) {
    const regrouped = regroupShardStates(states, world, { shardSamples: sizes });
    check(regrouped.length === world, `${regrouped.length} states for ${world} consumers`);
    states = [];
    for (const [c, state] of regrouped.entries()) {
      const stream = ShardStream.fromState(names, JSON.parse(JSON.stringify(state)) as ShardStreamState, {
        open,
        epochs,
        reopenRetries: 1,
      });
      const last = g === 1;
      const { kept, state: after } = await run(
        stream,
        g + 1,
        last ? Infinity : hash3(seed, c, 9) % (total + 1),
        last ? 0 : hash3(seed, c, 10) % 6,
      );
      states.push(after);
      if (last) out.catchUp.push(kept.filter((item) => item.epoch === state.epoch).length);
    }
  }
  return out;
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

  async 'uneven shards (1 to 50 samples, seeded) regrouped N → M → K at random positions: every sample once, dealt by shardSamples'() {
    let unevenCatchUp = 0;
    for (let seed = 0; seed < 40; seed++) {
      const sizes = unevenSizes(seed, 3 + (hash3(seed, 4) % 14));
      const { names, open } = unevenShards(sizes);
      const everything = sizes.flatMap((n, s) => Array.from({ length: n }, (_, i) => sampleKey(s, i)));
      const epochs = 1 + (seed % 3);
      const worlds = [1 + (hash3(seed, 1) % 4), 1 + (hash3(seed, 2) % 5), 1 + (hash3(seed, 3) % 4)] as const;
      const bufferSize = [0, 3, 9, 40][seed % 4]!;
      const what = `seed ${seed}, shards [${sizes.join(' ')}], consumers ${worlds.join(' → ')}, buffer ${bufferSize}`;
      const r = await threeGenerations(names, open, sizes, seed, epochs, worlds, bufferSize);
      checkExactlyOnce(r.delivered, everything, epochs, what);
      // Dealt greedily by true sample counts, no consumer of the catch-up epoch ends more than one
      // piece (at most the largest shard) above another; dealt by shard count, a consumer given the
      // 50-sample shards would.
      const spread = Math.max(...r.catchUp) - Math.min(...r.catchUp);
      check(spread <= Math.max(...sizes), `${what}: catch-up shares ${r.catchUp.join(', ')}`);
      if (worlds[2] > 1 && new Set(r.catchUp).size > 1) unevenCatchUp++;
    }
    // Some regroups must have dealt unequal shares, or the balance check above checked nothing.
    check(unevenCatchUp > 5, `only ${unevenCatchUp} regroups with shares of different sizes`);
  },

  async 'a shard that fails mid-read (truncated tar, cut connection): the samples before it once, the failure once with its shard and reason, regrouping around it'() {
    const hitIn = [0, 0, 0];
    for (let seed = 0; seed < 40; seed++) {
      const sizes = unevenSizes(seed + 100, 3 + (hash3(seed, 4) % 10));
      const broken = hash3(seed, 11) % sizes.length;
      sizes[broken] = Math.max(2, sizes[broken]!);
      const fault: ShardFault = { shard: broken, after: hash3(seed, 12) % sizes[broken]!, how: seed % 2 === 0 ? 'truncated' : 'cut' };
      const { names, open } = unevenShards(sizes, fault);
      const name = names[broken]!;
      const epochs = 1 + (seed % 3);
      const worlds = [1 + (hash3(seed, 1) % 4), 1 + (hash3(seed, 2) % 5), 1 + (hash3(seed, 3) % 4)] as const;
      const bufferSize = [0, 3, 9, 40][seed % 4]!;
      const what = `seed ${seed}, shard ${broken} of [${sizes.join(' ')}] ${fault.how} after ${fault.after}, consumers ${worlds.join(' → ')}`;
      const r = await threeGenerations(names, open, sizes, seed, epochs, worlds, bufferSize);
      check(r.failures.length === epochs, `${what}: ${r.failures.length} failures reported over ${epochs} epochs`);
      // The break lands inside the first member of sample `after`, so every sample before it is whole
      // and delivered (the reader knows which member it was reading when the stream broke).
      const read = (r.failures[0]?.failure.error as ShardError | undefined)?.samplesRead ?? -1;
      check(read === fault.after, `${what}: ${read} samples delivered before the break, ${fault.after} were whole`);
      for (const { failure, generation } of r.failures) {
        hitIn[generation]!++;
        const error = failure.error;
        const reason = fault.how === 'truncated' ? 'tar truncated' : CUT_REASON;
        check(
          failure.key === name && failure.shard === name && failure.stage === 'read' && error instanceof ShardError && error.shard === name,
          `${what}: failure ${failure.key} in stage ${failure.stage}: ${String(error)}`,
        );
        check(error.samplesRead === read, `${what}: one failure says ${error.samplesRead} samples read, another ${read}`);
        check(error.message.includes(reason), `${what}: the failure does not name its reason (${reason}): ${error.message}`);
      }
      // Everything but the broken shard's tail, and one failure per epoch in its place.
      const readable = sizes.flatMap((n, s) => Array.from({ length: s === broken ? read : n }, (_, i) => sampleKey(s, i)));
      checkExactlyOnce(r.delivered, [...readable, `!${name}`], epochs, what);
    }
    // Read by a fresh consumer, and by regrouped ones in both later generations.
    check(
      hitIn.every((n) => n > 0),
      `the broken shard failed in generations ${hitIn.join(', ')} (fresh, first regroup, second)`,
    );
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
