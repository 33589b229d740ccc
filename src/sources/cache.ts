// Caches of fetched bytes with a size bound and least-recently-used eviction, so a second epoch of
// a remote dataset reads nothing over the network. One interface; a directory in Node and Deno
// (this file), the Cache API in browsers (browser-cache.ts).
import { createFileWriter, fileSize, listDir, makeDir, openFileStream, readFile, removeFile } from '../runtime/index.ts';

export interface CacheStats {
  hits: number;
  misses: number;
  evictions: number;
  /** Bytes stored now, and the bound. */
  bytes: number;
  maxBytes: number;
  entries: number;
}

export interface ByteCache {
  get(key: string): Promise<Uint8Array | undefined>;
  /** Stores bytes, evicting the least recently used entries to stay within maxBytes. Entries larger than maxBytes are not kept. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** An entry as a stream (for shards: never the whole entry in memory), or undefined on a miss. */
  getStream(key: string): Promise<ReadableStream<Uint8Array> | undefined>;
  /** Stores an entry chunk by chunk; it appears only on commit(), and is evicted to the bound then. */
  putStream(key: string): Promise<CacheEntryWriter>;
  stats(): CacheStats;
}

export interface CacheEntryWriter {
  write(chunk: Uint8Array): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * Recency and sizes, kept in a Map whose insertion order is the recency order (oldest first).
 * Shared by the directory and Cache API stores.
 */
export class LruIndex {
  private readonly sizes = new Map<string, number>();
  bytes = 0;
  hits = 0;
  misses = 0;
  evictions = 0;
  constructor(readonly maxBytes: number) {
    if (!(maxBytes > 0)) throw new RangeError(`maxBytes ${maxBytes} must be positive`);
  }
  has(id: string): boolean {
    return this.sizes.has(id);
  }
  touch(id: string): void {
    const size = this.sizes.get(id);
    if (size === undefined) return;
    this.sizes.delete(id);
    this.sizes.set(id, size);
  }
  add(id: string, size: number): void {
    this.remove(id);
    this.sizes.set(id, size);
    this.bytes += size;
  }
  remove(id: string): void {
    const size = this.sizes.get(id);
    if (size === undefined) return;
    this.sizes.delete(id);
    this.bytes -= size;
  }
  /** The ids to evict (oldest first) so that `incoming` more bytes fit; removes them from the index. */
  makeRoom(incoming: number): string[] {
    const out: string[] = [];
    let left = this.bytes;
    for (const [id, size] of this.sizes) {
      if (left + incoming <= this.maxBytes) break;
      out.push(id);
      left -= size;
    }
    for (const id of out) this.remove(id);
    this.evictions += out.length;
    return out;
  }
  stats(): CacheStats {
    return { hits: this.hits, misses: this.misses, evictions: this.evictions, bytes: this.bytes, maxBytes: this.maxBytes, entries: this.sizes.size };
  }
}

/** FNV-1a over UTF-16 code units in two independent 32-bit lanes: a 64-bit file name for a key. */
export function keyHash(key: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ key.length;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * A directory of files named by key hash. Each file starts with its key (4-byte length + UTF-8), so
 * a hash collision is a miss, never wrong bytes. Recency is tracked per process; entries found on
 * open start in directory order.
 */
export class DirectoryCache implements ByteCache {
  private constructor(
    readonly dir: string,
    private readonly index: LruIndex,
  ) {}

  static async open(dir: string, options: { maxBytes: number }): Promise<DirectoryCache> {
    await makeDir(dir);
    const index = new LruIndex(options.maxBytes);
    for (const entry of await listDir(dir)) {
      if (entry.isDirectory || !/^[0-9a-f]{16}\.bin$/.test(entry.name)) continue; // .partial files are ignored
      const size = await fileSize(`${dir}/${entry.name}`);
      if (size !== undefined) index.add(entry.name, size);
    }
    const cache = new DirectoryCache(dir, index);
    for (const id of index.makeRoom(0)) await removeFile(`${dir}/${id}`); // the bound may have shrunk
    return cache;
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    const id = `${keyHash(key)}.bin`;
    if (!this.index.has(id)) {
      this.index.misses++;
      return undefined;
    }
    let file: Uint8Array;
    try {
      file = await readFile(`${this.dir}/${id}`);
    } catch {
      this.index.remove(id); // deleted behind our back
      this.index.misses++;
      return undefined;
    }
    const keyLength = file.length >= 4 ? new DataView(file.buffer, file.byteOffset).getUint32(0) : -1;
    if (keyLength < 0 || 4 + keyLength > file.length || decoder.decode(file.subarray(4, 4 + keyLength)) !== key) {
      this.index.misses++;
      return undefined;
    }
    this.index.touch(id);
    this.index.hits++;
    return file.subarray(4 + keyLength);
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    if (bytes.length > this.index.maxBytes) return;
    const writer = await this.putStream(key);
    try {
      await writer.write(bytes);
      await writer.commit();
    } catch (error) {
      await writer.abort().catch(() => undefined);
      throw error;
    }
  }

  async getStream(key: string): Promise<ReadableStream<Uint8Array> | undefined> {
    const id = `${keyHash(key)}.bin`;
    const stream = this.index.has(id) ? await openFileStream(`${this.dir}/${id}`).catch(() => undefined) : undefined;
    if (!stream) {
      this.index.remove(id);
      this.index.misses++;
      return undefined;
    }
    this.index.touch(id);
    this.index.hits++;
    return stream.pipeThrough(stripKeyHeader(key));
  }

  async putStream(key: string): Promise<CacheEntryWriter> {
    const id = `${keyHash(key)}.bin`;
    const keyBytes = encoder.encode(key);
    const head = new Uint8Array(4 + keyBytes.length);
    new DataView(head.buffer).setUint32(0, keyBytes.length);
    head.set(keyBytes, 4);
    // Written under a .partial name (ignored by open()) and renamed on commit.
    const file = await createFileWriter(`${this.dir}/${id}`);
    await file.write(head);
    let size = head.length;
    return {
      write: async (chunk) => {
        size += chunk.length;
        await file.write(chunk);
      },
      commit: async () => {
        this.index.remove(id);
        if (size > this.index.maxBytes) return file.abort();
        for (const old of this.index.makeRoom(size)) await removeFile(`${this.dir}/${old}`);
        await file.close();
        this.index.add(id, size);
      },
      abort: () => file.abort(),
    };
  }

  stats(): CacheStats {
    return this.index.stats();
  }
}

/** Drops the "[u32 length][key]" header of a cache file, checking the key (a hash collision errors, never returns wrong bytes). */
function stripKeyHeader(key: string): TransformStream<Uint8Array, Uint8Array> {
  let head: Uint8Array | undefined = new Uint8Array(0);
  return new TransformStream({
    transform(chunk, controller) {
      if (!head) return controller.enqueue(chunk);
      const joined = new Uint8Array(head.length + chunk.length);
      joined.set(head);
      joined.set(chunk, head.length);
      if (joined.length < 4) return void (head = joined);
      const end = 4 + new DataView(joined.buffer).getUint32(0);
      if (joined.length < end) return void (head = joined);
      if (decoder.decode(joined.subarray(4, end)) !== key) return controller.error(new Error(`cache entry for ${key} holds another key (hash collision)`));
      head = undefined;
      if (end < joined.length) controller.enqueue(joined.subarray(end));
    },
  });
}
