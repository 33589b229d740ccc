// How far the consumer has come through a pass, as (items done, slots of the next item done), for
// every loader. Each item of the order becomes zero or more slots in order (an image one slot, a
// video its clips; an item that failed before reaching the batcher, none); the slots fill batches
// `batchSize` at a time from the pass's start, a slot whose decode fails keeping its place (later
// rows move into it; a batch whose every slot failed is never handed out). So the pass's slots fall
// into fixed cells of `batchSize`, each batch is one cell, and once a batch is consumed every slot
// of its cell is done with, also the failed ones at its end and the items before them that never
// reached a slot: the position is the end of that cell. A pass resumed there starts its cells
// where the uninterrupted pass had one, so it hands out the same batches. (The furthest row of the
// batch, + 1, is not enough: it would leave the failed slots after it to be tried again, and a
// resumed pass would cut its cells elsewhere.)
//
// Per item the log holds its slot keys (set when it reaches the batcher; undefined while it has
// not, or never, for an item that failed before). A batch's cell is the first one from the
// position that holds every one of its keys, so a key repeated in a later epoch is not taken early.
// Nothing is allocated per slot beyond the caller's key arrays.
import { InternalError } from '../errors/index.ts';

export class CellPosition {
  readonly #batchSize: number;
  /** Items of the pass done with (from its first), and slots of the next one done with. */
  #videos = 0;
  #clips: number;
  /** Per item yielded, from #base: its slot keys once it reached the batcher. */
  readonly #keys: (string | readonly string[] | undefined)[] = [];
  #base = 0;
  #yielded = 0;
  readonly #want = new Map<string, number>();

  /** `clips`: slots of the pass's first item already done with (a resumed pass skips them). */
  constructor(batchSize: number, clips = 0) {
    this.#batchSize = batchSize;
    this.#clips = clips;
  }

  /** Items done with since the pass began: the pass's first item plus this is where it resumes. */
  get items(): number {
    return this.#videos;
  }

  /** Slots of the item at `items` done with (a video's clips: resuming samples it again and skips these). */
  get slots(): number {
    return this.#clips;
  }

  /** Logs the next item the source yields; returns its number in the pass (0 for the first). */
  yielded(): number {
    this.#keys.push(undefined);
    return this.#yielded++;
  }

  /** Item `seq` reached the batcher as slots with these keys (a video: all its clips, also any a resumed pass skips). */
  reached(seq: number, keys: string | readonly string[]): void {
    const i = seq - this.#base;
    if (i >= 0 && i < this.#keys.length) this.#keys[i] = keys;
  }

  /** A batch with these row keys was consumed: the position moves to the end of its cell. */
  consumed(keys: readonly string[]): void {
    if (keys.length === 0) return;
    const log = this.#keys;
    const want = this.#want;
    // The cursor: video v (index in the log) and its clip j, the next clip not yet walked.
    let v = this.#videos - this.#base;
    let j = this.#clips;
    for (;;) {
      want.clear();
      for (const key of keys) want.set(key, (want.get(key) ?? 0) + 1);
      let left = keys.length;
      let walked = 0;
      // One cell: the next batchSize clips (fewer at the end of what was sampled).
      while (walked < this.#batchSize && v < log.length) {
        const slotKeys = log[v];
        // One slot (a string) or several (an array of keys).
        const count = slotKeys === undefined ? 0 : typeof slotKeys === 'string' ? 1 : slotKeys.length;
        if (slotKeys === undefined || j >= count) {
          v++;
          j = 0;
          continue;
        }
        const key = (typeof slotKeys === 'string' ? slotKeys : slotKeys[j]) ?? '';
        j++;
        walked++;
        const n = want.get(key);
        if (n !== undefined && n > 0) {
          want.set(key, n - 1);
          left--;
        }
      }
      if (left === 0) break;
      if (walked === 0)
        throw new InternalError(
          `a batch (of ${keys.join(', ').slice(0, 200)}) is not a run of the slots of the source's items (the loader must keep input order)`,
        );
    }
    // Past the cell's last clip; at the end of a video, the next video.
    const ended = log[v];
    if (ended !== undefined && j >= (typeof ended === 'string' ? 1 : ended.length)) {
      v++;
      j = 0;
    }
    this.#videos = this.#base + v;
    this.#clips = j;
    this.#compact();
  }

  #compact(): void {
    const done = this.#videos - this.#base;
    if (done <= 4096) return;
    this.#keys.splice(0, done);
    this.#base += done;
  }
}
