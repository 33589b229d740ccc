// Token shards through ShardStream, written to disk by writeTokenShards: every document once per
// epoch across ranks with a shuffle buffer, exact mid-epoch resume, a regroup from 2 ranks to 3, and
// shards served over HTTP with a body cut mid-shard (reopened) and a shard cut every time. Shared by
// the Node and Deno tiers, which supply the 127.0.0.1 server and a temporary folder.
import {
  DirectoryCache,
  documentTokens,
  isFailure,
  regroupShardStates,
  ShardError,
  ShardStream,
  SourceError,
  writeTokenShards,
  type ShardItem,
  type ShardStreamOptions,
  type ShardStreamState,
  type TokenShardManifest,
} from '../../src/sources/index.ts';
import { readFile } from '../../src/runtime/index.ts';
import { assertEqual, check, within } from './assert.ts';
import { collect } from './async.ts';
import { FaultyServer } from './sources-http-scenarios.ts';
import type { Serve } from './sources-scenarios.ts';
import { streamOf } from './tar-helpers.ts';
import { seededDocs } from './token-shard-scenarios.ts';

const VOCAB = 5000;
const DOCS = seededDocs(42, 90, VOCAB, 60);

interface Written {
  names: string[];
  manifest: TokenShardManifest;
  /** The document a (shard name, key) names, in the order it was written. */
  docOf: (shard: string, key: string) => number[] | undefined;
}

/** DOCS as 4-5 shards of at most 700 tokens in a fresh folder. */
async function written(tempDir: () => Promise<string>): Promise<Written> {
  const dir = await tempDir();
  const manifest = await writeTokenShards(DOCS, { dir, tokensPerShard: 700, vocabSize: VOCAB });
  const names = manifest.shards.map((s) => `${dir}/${s.name}`);
  const first = new Map<string, number>();
  let at = 0;
  for (const [s, shard] of manifest.shards.entries()) {
    first.set(names[s]!, at);
    at += shard.samples;
  }
  const docOf = (shard: string, key: string) => DOCS[(first.get(shard) ?? Number.NaN) + Number(key)];
  return { names, manifest, docOf };
}

const tag = (item: ShardItem) => `${item.epoch}:${item.shard.slice(item.shard.lastIndexOf('/') + 1)}#${item.key}`;

/** Tags of what a stream delivers, each checked token by token against the document written. */
async function tagsOf(stream: AsyncIterable<ShardItem>, docOf: Written['docOf'], limit = Infinity): Promise<string[]> {
  const tags: string[] = [];
  if (limit <= 0) return tags;
  for await (const item of stream) {
    check(!isFailure(item), `failure ${isFailure(item) ? item.error.message : ''}`);
    assertEqual(Array.from(documentTokens(item.files)), docOf(item.shard, item.key), `tokens of ${tag(item)}`);
    tags.push(tag(item));
    if (tags.length >= limit) break;
  }
  return tags;
}

/** Every document of every epoch, tagged as delivered. */
const everyDoc = (w: Written, epochs: number) =>
  Array.from({ length: epochs }, (_, e) =>
    w.manifest.shards.flatMap((shard) => Array.from({ length: shard.samples }, (_, d) => `${e}:${shard.name}#${d}`)),
  ).flat();

const sorted = (tags: string[]) => [...tags].sort();
const stateAfter = (stream: ShardStream, count: number) => JSON.parse(JSON.stringify(stream.stateAt(count))) as ShardStreamState;

export const tokenShardStreamScenarios = (serve: Serve, tempDir: () => Promise<string>): Record<string, () => Promise<void>> => ({
  async 'writeTokenShards: numbered shards of at most tokensPerShard tokens and a manifest'() {
    const w = await written(tempDir);
    check(w.manifest.shards.length >= 4 && w.manifest.shards.length <= 6, `${w.manifest.shards.length} shards`);
    check(w.manifest.samples === DOCS.length && w.manifest.tokens === DOCS.flat().length, 'manifest totals');
    check(w.manifest.bytesPerToken === 2 && w.manifest.shards.every((s) => s.tokens <= 700), 'u16, within the bound');
    for (const [s, shard] of w.manifest.shards.entries()) {
      const bytes = await readFile(w.names[s]!);
      check(bytes.length === shard.bytes && bytes.length === 1024 + (shard.samples + 1) * 4 + shard.tokens * 2, `${shard.name} size`);
    }
    const dir = w.names[0]!.slice(0, w.names[0]!.lastIndexOf('/'));
    assertEqual(JSON.parse(new TextDecoder().decode(await readFile(`${dir}/shards.json`))), w.manifest, 'shards.json');
    check(w.manifest.shards[0]!.name === 'tokens-000000.bin', w.manifest.shards[0]!.name);
  },

  async 'two ranks with a shuffle buffer deliver every document once per epoch, token by token'() {
    const w = await written(tempDir);
    const base: ShardStreamOptions = { format: 'tokens', seed: 5, bufferSize: 16, epochs: 2, worldSize: 2 };
    const ranks = await Promise.all([0, 1].map((rank) => tagsOf(new ShardStream(w.names, { ...base, rank }), w.docOf)));
    assertEqual(sorted(ranks.flat()), sorted(everyDoc(w, 2)), 'once per epoch across the ranks');
    check(ranks[0]!.length > 0 && ranks[1]!.length > 0, 'both ranks read');
    // The shuffle buffer mixes documents across shard boundaries: not in stored order.
    check(ranks[0]!.slice(0, 20).join() !== sorted(ranks[0]!.slice(0, 20)).join(), 'shuffled');
  },

  async 'stateAt / fromState mid-epoch resumes with exactly the documents a run that never stopped reads'() {
    const w = await written(tempDir);
    const options: ShardStreamOptions = { format: 'tokens', seed: 9, bufferSize: 12, epochs: 2, worldSize: 2, rank: 1 };
    const whole = await tagsOf(new ShardStream(w.names, options), w.docOf);
    for (const stop of [0, 7, Math.floor(whole.length / 2) + 3]) {
      const first = new ShardStream(w.names, options);
      const before = await tagsOf(first, w.docOf, stop + 5); // read ahead of what was consumed, as a pipeline does
      const resumed = ShardStream.fromState(w.names, stateAfter(first, stop), { format: 'tokens', epochs: 2, bufferSize: 12 });
      const after = await tagsOf(resumed, w.docOf);
      assertEqual([...before.slice(0, stop), ...after], whole, `resumed after ${stop}`);
    }
  },

  async 'regroupShardStates from 2 ranks to 3 mid-epoch: no document lost or repeated'() {
    const w = await written(tempDir);
    const options: ShardStreamOptions = { format: 'tokens', seed: 11, bufferSize: 8, epochs: 2, worldSize: 2 };
    const wholes = await Promise.all([0, 1].map((rank) => tagsOf(new ShardStream(w.names, { ...options, rank }), w.docOf)));
    const states: ShardStreamState[] = [];
    const notYet: string[] = [];
    for (const rank of [0, 1]) {
      const stop = [13, 29][rank]!;
      const stream = new ShardStream(w.names, { ...options, rank });
      await tagsOf(stream, w.docOf, stop + 4);
      states.push(stateAfter(stream, stop));
      notYet.push(...wholes[rank]!.slice(stop));
    }
    const regrouped = regroupShardStates(states, 3, { shardSamples: w.manifest.shards.map((s) => s.samples) });
    const after: string[] = [];
    for (const state of regrouped) {
      const stream = ShardStream.fromState(w.names, JSON.parse(JSON.stringify(state)) as ShardStreamState, { format: 'tokens', epochs: 2 });
      after.push(...(await tagsOf(stream, w.docOf)));
    }
    assertEqual(sorted(after), sorted(notYet), 'the three read what the two had not');
  },

  async 'over HTTP: a body cut mid-shard is reopened and skips what it delivered; a shard cut every time is reported'() {
    const w = await written(tempDir);
    const server = new FaultyServer();
    for (const [s, name] of w.names.entries()) server.files.set(`/${w.manifest.shards[s]!.name}`, await readFile(name));
    const cutOnce = `/${w.manifest.shards[0]!.name}`;
    // Shard 1 is cut every time (it is full, so the cut at half its bytes lands among its documents).
    const cutAlways = `/${w.manifest.shards[1]!.name}`;
    server.faults.set(cutOnce, ['truncate', 'ok']);
    server.faults.set(cutAlways, ['truncate']);
    const running = await serve(server.handler);
    try {
      const urls = w.manifest.shards.map((s) => `${running.url}/${s.name}`);
      const stream = new ShardStream(urls, { format: 'tokens', shuffleShards: false, fetch: { retries: 0 }, reopenRetries: 1 });
      const items = await within(collect(stream), 10_000, 'the HTTP stream');
      const failures = items.filter(isFailure);
      check(failures.length === 1 && failures[0]!.stage === 'read' && failures[0]!.error instanceof ShardError, 'one lost rest');
      const lost = failures[0]!.error as ShardError;
      check(lost.shard === urls[1] && lost.attempts === 2, `lost ${lost.shard} after ${lost.attempts} attempts`);
      const docOf = (url: string, key: string) => w.docOf(w.names[urls.indexOf(url)]!, key);
      const delivered = items.filter((i) => !isFailure(i));
      for (const item of delivered)
        if (!isFailure(item)) assertEqual(Array.from(documentTokens(item.files)), docOf(item.shard, item.key), 'tokens');
      const cutSamples = w.manifest.shards[1]!.samples;
      const fromCut = delivered.filter((i) => i.shard === urls[1]).map((i) => i.key);
      check(lost.samplesRead === fromCut.length && fromCut.length > 0 && fromCut.length < cutSamples, `${fromCut.length} before the cut`);
      assertEqual(
        fromCut,
        Array.from({ length: fromCut.length }, (_, d) => String(d)),
        'the cut shard: its head once, in order',
      );
      const others = delivered.filter((i) => i.shard !== urls[1]).map((i) => `${i.shard}#${i.key}`);
      const expected = w.manifest.shards.flatMap((s, i) => (i === 1 ? [] : Array.from({ length: s.samples }, (_, d) => `${urls[i]}#${d}`)));
      assertEqual(others, expected, 'the reopened shard and the others: every document once');
      check(server.requests.get(cutOnce) === 2 && server.requests.get(cutAlways) === 2, `requests ${JSON.stringify([...server.requests])}`);
    } finally {
      await running.close();
    }
  },

  async 'over HTTP with a directory cache: the second epoch makes no request (each shard is read to its end)'() {
    const w = await written(tempDir);
    const server = new FaultyServer();
    for (const [s, name] of w.names.entries()) server.files.set(`/${w.manifest.shards[s]!.name}`, await readFile(name));
    const running = await serve(server.handler);
    try {
      const urls = w.manifest.shards.map((s) => `${running.url}/${s.name}`);
      const cache = await DirectoryCache.open(`${await tempDir()}/cache`, { maxBytes: 1 << 20 });
      const docOf = (url: string, key: string) => w.docOf(w.names[urls.indexOf(url)]!, key);
      const stream = new ShardStream(urls, { format: 'tokens', seed: 2, bufferSize: 10, epochs: 2, cache });
      const tags = await within(tagsOf(stream, docOf), 10_000, 'the cached stream');
      check(tags.length === 2 * DOCS.length, `${tags.length} deliveries`);
      check(server.total === urls.length, `${server.total} requests for ${urls.length} shards over two epochs`);
    } finally {
      await running.close();
    }
  },

  async 'a bad shard among good ones is one failure naming its typed cause; the rest are read'() {
    const w = await written(tempDir);
    const broken = new Uint8Array(await readFile(w.names[1]!));
    broken[0] = 0; // magic
    const open = async (name: string) => {
      const bytes = name === w.names[1] ? broken : await readFile(name);
      return streamOf(bytes, 1000);
    };
    const items = await collect(new ShardStream(w.names, { format: 'tokens', open, reopenRetries: 0 }));
    const failures = items.filter(isFailure);
    check(failures.length === 1 && failures[0]!.shard === w.names[1], 'the broken shard fails');
    const cause = (failures[0]!.error as ShardError).cause;
    check(cause instanceof SourceError && cause.code === 'bad-header', `cause ${String(cause)}`);
    check(items.length - 1 === DOCS.length - w.manifest.shards[1]!.samples, 'every other document');
  },
});
