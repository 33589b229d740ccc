// The browser's byte cache: the Cache API (persistent, per origin), with the same size bound and
// LRU eviction as the directory cache. Entries are stored under made-up URLs on a reserved .invalid
// host, so they can never be confused with, or served as, real responses.
import { DatasetError } from './errors.ts';
import { keyHash, type ByteCache, type CacheEntryWriter, type CacheStats } from './cache.ts';
import { LruIndex } from './lru.ts';

const SIZE_HEADER = 'x-tandem-size';
const KEY_HEADER = 'x-tandem-key';

export class CacheStorageCache implements ByteCache {
  private constructor(
    private readonly cache: Cache,
    private readonly index: LruIndex,
  ) {}

  /** Opens (or creates) the named cache in `storage` (default: globalThis.caches). */
  static async open(name: string, options: { maxBytes: number; storage?: CacheStorage }): Promise<CacheStorageCache> {
    const storage = options.storage ?? (globalThis as { caches?: CacheStorage }).caches;
    if (!storage)
      throw new DatasetError('no-cache-api', 'CacheStorageCache: the Cache API is not available here (it needs a secure context)');
    const cache = await storage.open(name);
    const index = new LruIndex(options.maxBytes);
    for (const request of await cache.keys()) {
      const response = await cache.match(request);
      if (!response) continue;
      // Streamed entries carry no size header (it was not known when they were stored).
      const header = response.headers.get(SIZE_HEADER);
      index.add(request.url, header === null ? (await response.blob()).size : Number(header));
    }
    const store = new CacheStorageCache(cache, index);
    for (const url of index.makeRoom(0)) await cache.delete(url);
    return store;
  }

  private url(key: string): string {
    return `https://tandem-cache.invalid/${keyHash(key)}`;
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    const url = this.url(key);
    const response = this.index.has(url) ? await this.cache.match(url) : undefined;
    if (!response || response.headers.get(KEY_HEADER) !== encodeURIComponent(key)) {
      if (this.index.has(url) && !response) this.index.remove(url);
      this.index.misses++;
      return undefined;
    }
    this.index.touch(url);
    this.index.hits++;
    return new Uint8Array(await response.arrayBuffer());
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const url = this.url(key);
    if (bytes.length > this.index.maxBytes) return;
    this.index.remove(url);
    for (const old of this.index.makeRoom(bytes.length)) await this.cache.delete(old);
    const headers = {
      [SIZE_HEADER]: String(bytes.length),
      [KEY_HEADER]: encodeURIComponent(key),
      'content-type': 'application/octet-stream',
    };
    await this.cache.put(url, new Response(bytes.slice().buffer, { headers }));
    this.index.add(url, bytes.length);
  }

  async getStream(key: string): Promise<ReadableStream<Uint8Array> | undefined> {
    const url = this.url(key);
    const response = this.index.has(url) ? await this.cache.match(url) : undefined;
    if (!response?.body || response.headers.get(KEY_HEADER) !== encodeURIComponent(key)) {
      if (this.index.has(url) && !response) this.index.remove(url);
      this.index.misses++;
      return undefined;
    }
    this.index.touch(url);
    this.index.hits++;
    return response.body;
  }

  async putStream(key: string): Promise<CacheEntryWriter> {
    const url = this.url(key);
    const pipe = new TransformStream<Uint8Array, Uint8Array>();
    const writer = pipe.writable.getWriter();
    const headers = { [KEY_HEADER]: encodeURIComponent(key), 'content-type': 'application/octet-stream' };
    // The Cache API consumes the body as it is written, and stores the entry only if it completes.
    const stored = this.cache.put(url, new Response(pipe.readable, { headers }));
    stored.catch(() => undefined);
    let size = 0;
    return {
      write: async (chunk) => {
        size += chunk.length;
        await writer.write(chunk);
      },
      commit: async () => {
        await writer.close();
        await stored;
        this.index.remove(url);
        if (size > this.index.maxBytes) return void (await this.cache.delete(url));
        for (const old of this.index.makeRoom(size)) await this.cache.delete(old);
        this.index.add(url, size);
      },
      abort: async () => {
        await writer.abort(new Error('cache write aborted')).catch(() => undefined);
        await stored.catch(() => undefined);
      },
    };
  }

  stats(): CacheStats {
    return this.index.stats();
  }
}
