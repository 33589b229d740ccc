// Sampling, partitioning, resume, shard streams and mixing: runtime-neutral scenario bodies shared by
// the Node, Deno and Chromium tiers. Shards are served from memory through a custom opener.
import { hash3 } from '../../src/random/index.ts';
import {
  DistributedSampler,
  isFailure,
  mixSources,
  partitionList,
  resolvePartition,
  ShardStream,
  shuffledEpoch,
  type ShardItem,
  type ShardOpener,
  type ShardStreamOptions,
  type UnevenMode,
  type MixInput,
  WeightedMix,
} from '../../src/sources/index.ts';
import { Pipeline, PipelineBuilder } from '../../src/pipeline/index.ts';
import { check } from './assert.ts';
import { collect } from './async.ts';
import { payload, streamOf, writeTar, type TarEntry } from './tar-helpers.ts';

/** Deterministic (world, size, seed) combos, including the edge cases: empty, fewer items than ranks. */
export function combos(count: number, salt = 0): Array<{ world: number; size: number; seed: number }> {
  const fixed = [
    { world: 1, size: 0, seed: 1 },
    { world: 3, size: 0, seed: 2 },
    { world: 8, size: 3, seed: 3 },
    { world: 4, size: 4, seed: 4 },
    { world: 7, size: 1, seed: 5 },
  ];
  const drawn = Array.from({ length: count }, (_, i) => ({
    world: 1 + (hash3(salt, i, 1) % 16),
    size: hash3(salt, i, 2) % 300,
    seed: hash3(salt, i, 3),
  }));
  return [...fixed, ...drawn];
}

/** Every rank's indices for one epoch (rank r's list at [r]). */
function epochByRank(size: number, world: number, seed: number, epoch: number, uneven: UnevenMode): number[][] {
  return Array.from({ length: world }, (_, rank) => {
    const sampler = new DistributedSampler({ size, seed, rank, worldSize: world, uneven, epochs: epoch + 1 });
    sampler.seek(epoch);
    return [...sampler];
  });
}

export const shardEntries = (shard: number, perShard: number): TarEntry[] =>
  Array.from({ length: perShard }, (_, i) => {
    const key = `s${String(shard).padStart(3, '0')}-${String(i).padStart(4, '0')}`;
    return [
      { name: `${key}.bin`, data: payload(64 + ((shard * 7 + i) % 50), shard * 1000 + i) },
      { name: `${key}.cls`, data: String(i % 5) },
    ];
  }).flat();

/** `count` shards of `perShard` samples in memory, and an opener that counts opens. */
export function memoryShards(count: number, perShard: number) {
  const bytes = new Map(Array.from({ length: count }, (_, s) => [`mem://shard-${s}.tar`, writeTar(shardEntries(s, perShard))]));
  const opens = new Map<string, number>();
  const open: ShardOpener = async (name) => {
    opens.set(name, (opens.get(name) ?? 0) + 1);
    const shard = bytes.get(name);
    if (!shard) throw new Error(`no shard ${name}`);
    return streamOf(shard, 700);
  };
  return { names: [...bytes.keys()], open, opens };
}

const keysOf = (items: ShardItem[]) => items.map((i) => (isFailure(i) ? `!${i.key}` : i.key));

/** Runs a stream to its end, or stops after `stopAt` items and returns the state there. */
async function runUntil(stream: ShardStream, stopAt = Infinity): Promise<{ keys: string[]; state: ReturnType<ShardStream['state']> }> {
  const keys: string[] = [];
  if (stopAt > 0) {
    for await (const item of stream) {
      keys.push(isFailure(item) ? `!${item.key}` : item.key);
      if (keys.length >= stopAt) break;
    }
  }
  return { keys, state: JSON.parse(JSON.stringify(stream.state())) };
}

export const samplingScenarios: Record<string, () => Promise<void>> = {
  async 'every sample exactly once across ranks per epoch; pad and drop give equal counts'() {
    for (const { world, size, seed } of combos(60)) {
      for (const epoch of [0, 3]) {
        const exact = epochByRank(size, world, seed, epoch, 'exact');
        const all = exact.flat().sort((a, b) => a - b);
        check(all.length === size && all.every((v, i) => v === i), `exact: world ${world} size ${size} seed ${seed}: ${all.length} items`);
        check(Math.max(...exact.map((r) => r.length)) - Math.min(...exact.map((r) => r.length)) <= 1, 'exact: counts differ by at most 1');
        const pad = epochByRank(size, world, seed, epoch, 'pad');
        const padLength = size === 0 ? 0 : Math.ceil(size / world);
        check(pad.every((r) => r.length === padLength) && new Set(pad.flat()).size === size, `pad: world ${world} size ${size}`);
        const drop = epochByRank(size, world, seed, epoch, 'drop');
        const dropped = drop.flat();
        check(
          drop.every((r) => r.length === Math.floor(size / world)) && new Set(dropped).size === dropped.length,
          `drop: world ${world} size ${size}`,
        );
      }
    }
  },

  async 'a shuffle is the same for the same seed and epoch, different across epochs, and agrees with shuffledEpoch'() {
    const items = Array.from({ length: 500 }, (_, i) => i);
    const a = [...new DistributedSampler({ size: 500, seed: 42, epochs: 3 })];
    const b = [...new DistributedSampler({ size: 500, seed: 42, epochs: 3 })];
    check(a.join() === b.join(), 'same seed, same order');
    check(
      a.slice(0, 500).join() === shuffledEpoch(items, 42, 0).join() && a.slice(1000).join() === shuffledEpoch(items, 42, 2).join(),
      'matches shuffledEpoch',
    );
    check(a.slice(0, 500).join() !== a.slice(500, 1000).join(), 'epochs differ');
    check(a.join() !== [...new DistributedSampler({ size: 500, seed: 43, epochs: 3 })].join(), 'seeds differ');
    check([...new DistributedSampler({ size: 5, shuffle: false })].join() === '0,1,2,3,4', 'shuffle off keeps order');
  },

  async 'ranks times workers split shards exactly once; options are checked'() {
    for (const { world, size } of combos(40, 7)) {
      const workers = 1 + (size % 4);
      const shards = Array.from({ length: size % 50 }, (_, i) => `shard-${i}`);
      const seen = [];
      for (let rank = 0; rank < world; rank++)
        for (let w = 0; w < workers; w++)
          seen.push(...partitionList(shards, resolvePartition({ rank, worldSize: world, workerId: w, numWorkers: workers })));
      check(
        seen.length === shards.length && new Set(seen).size === shards.length,
        `world ${world} × ${workers} workers over ${shards.length} shards`,
      );
    }
    for (const bad of [
      { rank: 2, worldSize: 2 },
      { rank: 0, worldSize: 0 },
      { rank: 0, worldSize: 1, workerId: 1, numWorkers: 1 },
    ]) {
      let threw = false;
      try {
        resolvePartition(bad);
      } catch (error) {
        threw = error instanceof RangeError;
      }
      check(threw, `refused ${JSON.stringify(bad)}`);
    }
  },

  async 'a sampler restored from JSON continues with nothing repeated or skipped'() {
    for (const { world, size, seed } of combos(40, 11)) {
      const rank = seed % world;
      const options = { size, seed, rank, worldSize: world, epochs: 3, uneven: (['exact', 'pad', 'drop'] as const)[seed % 3] };
      const whole = [...new DistributedSampler(options)];
      const stopAt = whole.length === 0 ? 0 : hash3(seed, 5) % (whole.length + 1);
      const first = new DistributedSampler(options);
      const head: number[] = [];
      for (let i = 0; i < stopAt; i++) head.push(first.next().value as number);
      const saved = JSON.parse(JSON.stringify(first.state()));
      const rest = [...DistributedSampler.fromState(saved)];
      check(
        [...head, ...rest].join() === whole.join(),
        `world ${world} size ${size} seed ${seed} stop ${stopAt}: ${head.length}+${rest.length} vs ${whole.length}`,
      );
      // state(step) names the same position for a consumer that lags its prefetching source.
      const lagging = DistributedSampler.fromState(new DistributedSampler(options).state(stopAt));
      check([...lagging].join() === rest.join(), 'state(step) equals the live state');
    }
  },

  async 'shard stream: shuffle buffer and shard order are seeded; ranks and workers get every sample once'() {
    const { names, open } = memoryShards(7, 9);
    const everything = names
      .flatMap((_, s) => Array.from({ length: 9 }, (_, i) => `s${String(s).padStart(3, '0')}-${String(i).padStart(4, '0')}`))
      .sort();
    const options: ShardStreamOptions = { open, seed: 5, bufferSize: 10, epochs: 2 };
    const a = keysOf(await collect(new ShardStream(names, options)));
    const b = keysOf(await collect(new ShardStream(names, options)));
    check(a.join() === b.join(), 'same seed, same order');
    check(
      a.slice(0, 63).sort().join() === everything.join() && a.slice(63).sort().join() === everything.join(),
      'each epoch is every sample once',
    );
    check(a.slice(0, 63).join() !== a.slice(63).join(), 'epochs differ');
    const plain = keysOf(await collect(new ShardStream(names, { open, shuffleShards: false })));
    check(plain.join() === everything.join(), 'no shuffle: shard order, sample order');
    for (const [world, workers] of [
      [2, 1],
      [3, 2],
      [4, 3],
    ] as const) {
      const all: string[] = [];
      for (let rank = 0; rank < world; rank++)
        for (let w = 0; w < workers; w++)
          all.push(
            ...keysOf(
              await collect(new ShardStream(names, { ...options, epochs: 1, rank, worldSize: world, workerId: w, numWorkers: workers })),
            ),
          );
      check(all.sort().join() === everything.join(), `world ${world} × ${workers}: ${all.length} samples`);
    }
  },

  async 'shard stream restored from JSON at a random step equals an uninterrupted run'() {
    const { names, open, opens } = memoryShards(6, 8);
    for (let seed = 0; seed < 24; seed++) {
      const options: ShardStreamOptions = { open, seed, bufferSize: [0, 1, 5, 20, 100][seed % 5], epochs: 2, rank: seed % 2, worldSize: 2 };
      const whole = (await runUntil(new ShardStream(names, options))).keys;
      const stopAt = hash3(seed, 9) % (whole.length + 1);
      const head = await runUntil(new ShardStream(names, options), stopAt);
      opens.clear();
      const rest = (await runUntil(ShardStream.fromState(names, head.state, options))).keys;
      check(
        [...head.keys, ...rest].join() === whole.join(),
        `seed ${seed} stop ${stopAt}/${whole.length}: ${[...head.keys, ...rest].length}`,
      );
      // Restoring re-reads at most the shards the buffer spans, not the epoch's finished shards.
      const reopened = [...opens.values()].reduce((n, v) => n + v, 0);
      const { epoch, shard, buffer } = head.state;
      const remaining = Math.max(0, 3 - shard) + 3 * (1 - epoch) + new Set(buffer.map(([position]) => position)).size;
      check(reopened <= remaining, `seed ${seed}: ${reopened} opens after restore, at most ${remaining} needed`);
    }
  },

  async 'stateAt names the position of an item the consumer is behind on; a pipeline source resumes from it'() {
    const { names, open } = memoryShards(5, 7);
    for (let seed = 0; seed < 12; seed++) {
      const options: ShardStreamOptions = { open, seed, bufferSize: 6, epochs: 2 };
      const whole = (await runUntil(new ShardStream(names, options))).keys;
      const consumed = hash3(seed, 4) % whole.length;
      // The source runs ahead of the consumer: ask for the state `consumed` items in.
      const ahead = new ShardStream(names, options);
      await runUntil(ahead, Math.min(whole.length, consumed + 1 + (seed % 9)));
      const rest = (await runUntil(ShardStream.fromState(names, JSON.parse(JSON.stringify(ahead.stateAt(consumed))), options))).keys;
      check([...whole.slice(0, consumed), ...rest].join() === whole.join(), `seed ${seed}: consumed ${consumed}`);
    }
    // Through a pipeline that reads ahead: checkpoint at the last item the loop saw.
    const options: ShardStreamOptions = { open, seed: 9, bufferSize: 4 };
    const whole = (await runUntil(new ShardStream(names, options))).keys;
    const stream = new ShardStream(names, options);
    const pipeline = new PipelineBuilder()
      .addSource(stream)
      .pipe(async (item: ShardItem) => item, { concurrency: 4 })
      .addSink(8)
      .build();
    const seen: string[] = [];
    let saved: ReturnType<ShardStream['stateAt']> | undefined;
    for await (const item of pipeline) {
      seen.push(item.key);
      if (seen.length === 13) {
        saved = JSON.parse(JSON.stringify(stream.stateAt(item.index + 1)));
        break;
      }
    }
    const rest = (await runUntil(ShardStream.fromState(names, saved!, options))).keys;
    check([...seen, ...rest].join() === whole.join(), `pipeline resume: ${seen.length}+${rest.length} of ${whole.length}`);
  },

  async 'a weighted mix restored from JSON (any step, lagging too) continues exactly: stop, drop, cycle'() {
    // Inputs of different lengths whose passes differ (pass number in the value), seekable or not.
    const input = (tag: string, n: number, weight: number, seekable: boolean): MixInput<string> => ({
      weight,
      seekable,
      source: ({ pass, skip }) => Array.from({ length: n }, (_, i) => `${tag}${pass}.${i}`).slice(seekable ? skip : 0),
    });
    for (let seed = 0; seed < 30; seed++) {
      const exhausted = (['stop', 'drop', 'cycle'] as const)[seed % 3];
      const inputs = [input('a', 5 + (seed % 7), 1, seed % 2 === 0), input('b', 3 + (seed % 4), 2, true), input('c', 9, 0.5, false)];
      const options = { seed, exhausted, limit: 60, stateLag: 4 }; // a small lag exercises folding the log
      const whole: string[] = [];
      for await (const item of new WeightedMix(inputs, options)) whole.push(item.value);
      const stopAt = hash3(seed, 3) % (whole.length + 1);
      const lag = seed % 4;
      const mix = new WeightedMix(inputs, options);
      const head: string[] = [];
      if (stopAt + lag > 0) {
        for await (const item of mix) {
          head.push(item.value);
          if (head.length >= Math.min(whole.length, stopAt + lag)) break;
        }
      }
      const saved = JSON.parse(JSON.stringify(mix.stateAt(Math.min(stopAt, head.length))));
      const rest: string[] = [];
      for await (const item of WeightedMix.fromState(inputs, saved, options)) rest.push(item.value);
      const resumed = [...head.slice(0, Math.min(stopAt, head.length)), ...rest];
      check(resumed.join() === whole.join(), `seed ${seed} ${exhausted} stop ${stopAt} lag ${lag}: ${resumed.length} vs ${whole.length}`);
    }
  },

  async 'worker streams merged in one pipeline read every sample once'() {
    const { names, open } = memoryShards(9, 5);
    const streams = [0, 1, 2].map((workerId) =>
      new PipelineBuilder().addSource(new ShardStream(names, { open, seed: 1, bufferSize: 3, workerId, numWorkers: 3 })),
    );
    const keys: string[] = [];
    for await (const item of new PipelineBuilder().addSource(Pipeline.merge(streams)).build()) keys.push((item as ShardItem).key);
    check(keys.length === 45 && new Set(keys).size === 45, `${keys.length} items, ${new Set(keys).size} distinct`);
  },

  async 'a refused sample is reported in place and counted by the cursor'() {
    const bad = writeTar([...shardEntries(0, 2), { name: '../escape.bin', data: 'x' }, ...shardEntries(1, 2)]);
    const open: ShardOpener = async () => streamOf(bad, 300);
    const items = await collect(new ShardStream(['mem://bad.tar'], { open }));
    check(keysOf(items).join() === 's000-0000,s000-0001,!../escape,s001-0000,s001-0001', keysOf(items).join());
    const failure = items.find(isFailure);
    check(failure?.stage === 'sample' && failure.error.message.includes('mem://bad.tar'), 'failure names stage and shard');
    // Failures are items too: resuming after one, or after a lost shard, does not report it again.
    const shards = memoryShards(2, 3);
    const withLost: ShardOpener = (name, signal) =>
      name === 'mem://bad.tar'
        ? open(name, signal)
        : name === 'mem://gone.tar'
          ? Promise.reject(new Error('gone'))
          : shards.open(name, signal);
    const list = ['mem://bad.tar', 'mem://gone.tar', ...shards.names];
    const lossy: ShardStreamOptions = { open: withLost, shuffleShards: false, bufferSize: 2 };
    const whole = (await runUntil(new ShardStream(list, lossy))).keys;
    check(whole.filter((k) => k.startsWith('!')).join() === '!../escape,!mem://gone.tar', whole.join());
    for (let stop = 0; stop <= whole.length; stop++) {
      const head = await runUntil(new ShardStream(list, lossy), stop);
      const rest = (await runUntil(ShardStream.fromState(list, head.state, lossy))).keys;
      check([...head.keys, ...rest].join() === whole.join(), `stop ${stop}: ${[...head.keys, ...rest].join()}`);
    }
  },

  async 'weighted mixing: seeded, weights exact in expectation, stop / drop / cycle'() {
    const counter = (tag: string, n: number) => () => Array.from({ length: n }, (_, i) => `${tag}${i}`);
    const inputs = [
      { source: counter('a', 10), weight: 1 },
      { source: counter('b', 10), weight: 2 },
      { source: counter('c', 10), weight: 7 },
    ];
    const draws = await collect(mixSources(inputs, { seed: 3, exhausted: 'cycle', limit: 20_000 }));
    const share = [0, 1, 2].map((i) => draws.filter((d) => d.input === i).length / draws.length);
    check(
      Math.abs(share[0]! - 0.1) < 0.01 && Math.abs(share[1]! - 0.2) < 0.015 && Math.abs(share[2]! - 0.7) < 0.015,
      `shares ${share.map((s) => s.toFixed(3))}`,
    );
    const again = await collect(mixSources(inputs, { seed: 3, exhausted: 'cycle', limit: 20_000 }));
    check(again.map((d) => d.value).join() === draws.map((d) => d.value).join(), 'same seed, same mix');
    const stopped = await collect(mixSources(inputs, { seed: 3, exhausted: 'stop' }));
    check(
      stopped.filter((d) => d.input === 2).length === 10 && stopped.length < 30,
      `stop ends at the first exhausted input (${stopped.length})`,
    );
    const dropped = await collect(mixSources(inputs, { seed: 3, exhausted: 'drop' }));
    check(dropped.length === 30 && new Set(dropped.map((d) => d.value)).size === 30, 'drop delivers every item of every input once');
    const asyncInput = {
      source: (async function* () {
        yield 'x';
        yield 'y';
      })(),
      weight: 1,
    };
    check((await collect(mixSources([asyncInput], {}))).map((d) => d.value).join() === 'x,y', 'async inputs');
  },
};
