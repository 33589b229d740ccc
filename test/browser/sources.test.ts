import { describe, test } from 'vitest';
import { CacheStorageCache, isFailure, loadUrls, ShardStream, type LoadResult } from '../../src/sources/index.ts';
import { check } from '../shared/assert.ts';
import { elasticScenarios } from '../shared/sources-elastic-scenarios.ts';
import { fileScenarios } from '../shared/sources-files-scenarios.ts';
import { memoryShards, samplingScenarios } from '../shared/sources-sampling-scenarios.ts';
import { scenarios } from '../shared/sources-scenarios.ts';
import { bytesEqual, payload } from '../shared/tar-helpers.ts';

// The tar, sampling, resume, elastic regrouping, mixing, tar-writer and picked-folder scenarios in Chromium. The
// fault-injecting HTTP scenarios need a server the page cannot start; they run in the Node and Deno
// tiers. Here the Cache API cache is checked against files the test page's own server serves.
describe('sources (Chromium)', () => {
  for (const [name, body] of Object.entries(scenarios)) test(name, body);
  for (const [name, body] of Object.entries(samplingScenarios)) test(name, body);
  for (const [name, body] of Object.entries(elasticScenarios)) test(`elastic: ${name}`, body);
  for (const [name, body] of Object.entries(fileScenarios)) test(name, body);

  test('the Cache API cache: the second epoch makes no request; LRU keeps within the bound; entries persist', async () => {
    performance.setResourceTimingBufferSize(100_000);
    const urls = ['/README.md', '/docs/architecture.md', '/docs/pipeline.md'].map((p) => new URL(p, location.origin).href);
    const requests = (url: string) => performance.getEntriesByType('resource').filter((e) => e.name === url).length;
    const name = `tandem-test-${Math.random().toString(36).slice(2)}`;
    try {
      const cache = await CacheStorageCache.open(name, { maxBytes: 1 << 22 });
      const first: LoadResult<string>[] = [];
      for await (const r of loadUrls(urls, { cache, concurrency: 2 })) first.push(r);
      check(
        first.every((r) => !isFailure(r) && !r.cached && r.bytes.length > 0),
        'first epoch fetched',
      );
      const before = urls.map(requests);
      check(
        before.every((n) => n >= 1),
        `first epoch requests ${before}`,
      );
      const second: LoadResult<string>[] = [];
      for await (const r of loadUrls(urls, { cache, concurrency: 2 })) second.push(r);
      check(
        second.every((r, i) => !isFailure(r) && r.cached && bytesEqual(r.bytes, (first[i] as { bytes: Uint8Array }).bytes)),
        'second epoch from the cache',
      );
      check(urls.map(requests).join() === before.join(), `no new requests: ${before} → ${urls.map(requests)}`);
      const reopened = await CacheStorageCache.open(name, { maxBytes: 1 << 22 });
      check(reopened.stats().entries === 3 && (await reopened.get(urls[1]!)) !== undefined, 'persisted');

      const small = await CacheStorageCache.open(`${name}-small`, { maxBytes: 5000 });
      for (let i = 0; i < 4; i++) await small.put(`k${i}`, payload(1000, i));
      await small.get('k0');
      await small.put('k4', payload(1000, 4));
      await small.put('k5', payload(1000, 5));
      const stats = small.stats();
      check(stats.bytes <= 5000 && stats.evictions === 1, JSON.stringify(stats));
      check(bytesEqual(await small.get('k0'), payload(1000, 0)) && (await small.get('k1')) === undefined, 'least recently used evicted');
    } finally {
      await caches.delete(name);
      await caches.delete(`${name}-small`);
    }
  });

  test('shards through the Cache API: streamed in while read, the next epoch opens nothing; abandoned reads are not kept', async () => {
    const name = `tandem-test-shards-${Math.random().toString(36).slice(2)}`;
    try {
      const cache = await CacheStorageCache.open(name, { maxBytes: 1 << 22 });
      const { names, open, opens } = memoryShards(4, 6);
      for await (const item of new ShardStream([names[0]!], { open, cache })) if (item) break;
      check(cache.stats().entries === 0 && (await caches.open(name).then((c) => c.keys())).length === 0, 'abandoned shard not kept');
      const keys = async () => await collectKeys(new ShardStream(names, { open, cache, seed: 1, bufferSize: 4 }));
      const first = await keys();
      const opened = [...opens.values()].reduce((a, b) => a + b, 0);
      const second = await keys();
      check(first.length === 24 && second.join() === first.join(), `${first.length} samples, same order`);
      check(
        [...opens.values()].reduce((a, b) => a + b, 0) === opened && cache.stats().entries === 4,
        `opens ${opened} → ${[...opens.values()]}; ${JSON.stringify(cache.stats())}`,
      );
      const reopened = await CacheStorageCache.open(name, { maxBytes: 1 << 22 });
      check(reopened.stats().entries === 4 && reopened.stats().bytes === cache.stats().bytes, 'streamed entries are sized on open');
    } finally {
      await caches.delete(name);
    }
  });
});

async function collectKeys(stream: ShardStream): Promise<string[]> {
  const keys: string[] = [];
  for await (const item of stream) keys.push(isFailure(item) ? `!${item.key}` : item.key);
  return keys;
}
