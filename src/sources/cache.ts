// Caches of fetched bytes with a size bound and least-recently-used eviction, so a second epoch of
// a remote dataset reads nothing over the network. One interface; a directory in Node and Deno
// (this file), the Cache API in browsers (browser-cache.ts).
import { DatasetError } from './errors.ts';
import { type CacheStats, LruIndex } from './lru.ts';

export type { CacheStats } from './lru.ts';
import { createFileWriter, fileSize, listDir, makeDir, openFileStream, readFile, removeFile, type FileWriter } from '../runtime/index.ts';

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
  /** Entries being written: a second writer of the same key would share its .partial file. */
  private readonly writing = new Set<string>();

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
    // The same key fetched twice at once (a repeated URL): the first writer stores it.
    if (this.writing.has(id)) return { write: async () => undefined, commit: async () => undefined, abort: async () => undefined };
    this.writing.add(id);
    let file: FileWriter;
    try {
      // Written under a .partial name (ignored by open()) and renamed on commit.
      file = await createFileWriter(`${this.dir}/${id}`);
      await file.write(head);
    } catch (error) {
      this.writing.delete(id);
      throw error;
    }
    let size = head.length;
    return {
      write: async (chunk) => {
        size += chunk.length;
        await file.write(chunk);
      },
      commit: async () => {
        try {
          this.index.remove(id);
          if (size > this.index.maxBytes) return await file.abort();
          for (const old of this.index.makeRoom(size)) await removeFile(`${this.dir}/${old}`);
          await file.close();
          this.index.add(id, size);
        } finally {
          this.writing.delete(id);
        }
      },
      abort: async () => {
        try {
          await file.abort();
        } finally {
          this.writing.delete(id);
        }
      },
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
      if (joined.length < 4) {
        head = joined;
        return;
      }
      const end = 4 + new DataView(joined.buffer).getUint32(0);
      if (joined.length < end) {
        head = joined;
        return;
      }
      if (decoder.decode(joined.subarray(4, end)) !== key)
        return controller.error(new DatasetError('cache-collision', `cache entry for ${key} holds another key (hash collision)`));
      head = undefined;
      if (end < joined.length) controller.enqueue(joined.subarray(end));
    },
  });
}
