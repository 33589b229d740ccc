// The blocks DecodePool.malloc has handed out and not yet freed, so that a raw address gets the
// checks a PoolBuffer handle gets: a decode target must lie inside one live block with room for the
// request, and only a live block's start may be freed, once. A short list (a pool's batch buffers
// and a few more), scanned per decode.

interface Block {
  start: number;
  end: number;
}

export class RawBlocks {
  readonly #blocks: Block[] = [];

  add(ptr: number, bytes: number): void {
    this.#blocks.push({ start: ptr, end: ptr + bytes });
  }

  /** Forgets the block starting at `ptr`; false when no live block starts there. */
  remove(ptr: number): boolean {
    const i = this.#blocks.findIndex((b) => b.start === ptr);
    if (i < 0) return false;
    this.#blocks.splice(i, 1);
    return true;
  }

  /** True when `bytes` bytes from `ptr` lie inside one live block. */
  holds(ptr: number, bytes: number): boolean {
    for (const block of this.#blocks) if (ptr >= block.start && ptr + bytes <= block.end) return true;
    return false;
  }
}
