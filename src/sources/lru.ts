// Least-recently-used bookkeeping shared by the byte caches (directory, Cache API): sizes and
// recency only; the stores themselves hold the bytes.

/** A byte cache's counters (the index keeps them; DirectoryCache and the browser cache report them). */
export interface CacheStats {
  hits: number;
  misses: number;
  evictions: number;
  /** Bytes stored now, and the bound. */
  bytes: number;
  maxBytes: number;
  entries: number;
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
    return {
      hits: this.hits,
      misses: this.misses,
      evictions: this.evictions,
      bytes: this.bytes,
      maxBytes: this.maxBytes,
      entries: this.sizes.size,
    };
  }
}
