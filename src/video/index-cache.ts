// The indexes a video loader has read, kept for its later epochs (as torchvision's VideoClips keeps
// every video's frame times): a video seen before reads only its clips' packets, not its MP4
// `moov` again, nor its WebM's block headers (for a WebM or MKV read whole before, no longer the
// whole file). Keyed by the item's key and its size in bytes; the least recently used indexes go
// first once their typed arrays pass the budget.
import { LOOKUP_BYTES_PER_SAMPLE } from './clip-packets.ts';
import type { Mp4Index } from './mp4-index.ts';

interface Entry {
  size: number;
  index: Mp4Index;
  bytes: number;
}

/** The bytes an index holds: its per-sample arrays, the lookup its clips build beside it, and codec configuration. */
function bytesOf(index: Mp4Index): number {
  const arrays = [index.frameTimes, index.pts, index.dts, index.durations, index.offsets, index.sizes, index.key];
  const lookup = index.samples * LOOKUP_BYTES_PER_SAMPLE;
  return arrays.reduce((n, a) => n + a.byteLength, 0) + lookup + (index.extradata?.byteLength ?? 0) + 256;
}

export class IndexCache {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  constructor(readonly maxBytes: number) {}

  /** The index of the item of this key, read when it had this size; undefined when not kept. */
  get(key: string, size: number): Mp4Index | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    // Most recently used last, for the eviction order.
    this.#entries.delete(key);
    if (entry.size !== size) {
      this.#bytes -= entry.bytes;
      return undefined;
    }
    this.#entries.set(key, entry);
    return entry.index;
  }

  put(key: string, size: number, index: Mp4Index): void {
    const bytes = bytesOf(index);
    const old = this.#entries.get(key);
    if (old) {
      this.#entries.delete(key);
      this.#bytes -= old.bytes;
    }
    if (bytes > this.maxBytes) return;
    for (const [k, e] of this.#entries) {
      if (this.#bytes + bytes <= this.maxBytes) break;
      this.#entries.delete(k);
      this.#bytes -= e.bytes;
    }
    this.#entries.set(key, { size, index, bytes });
    this.#bytes += bytes;
  }

  /** Indexes kept and the bytes they hold. */
  get stats(): { indexes: number; bytes: number } {
    return { indexes: this.#entries.size, bytes: this.#bytes };
  }
}
