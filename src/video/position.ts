// How far the consumer has come through a pass of the video loader, as (videos done, clips of the
// next video done). Each video of the order becomes its clips, in order; the clips that reach the
// decode stage fill batches `batchSize` slots at a time from the pass's start, a clip that fails to
// decode keeping its slot (later rows move into it; a batch whose every clip failed is never handed
// out). So the pass's clips fall into fixed cells of `batchSize`, each batch is one cell, and once
// a batch is consumed every clip of its cell is done with, also the failed ones at its end and the
// videos before them that failed whole: the position is the end of that cell. A pass resumed there
// starts its cells where the uninterrupted pass had one, so it hands out the same batches.
//
// Per video the log holds its clip keys (the array the sampler's keys were made into, set when it
// is sampled; undefined while it is not, or never, for a video that failed whole). A batch's cell
// is the first one from the position that holds every one of its keys, so a key repeated in a
// later epoch is not taken early. Nothing is allocated per clip.
import { InternalError } from '../errors/index.ts';

export class ClipPosition {
  readonly #batchSize: number;
  /** Videos of the pass done with (from its first), and clips of the next one done with. */
  #videos = 0;
  #clips: number;
  /** Per video yielded, from #base: its clip keys once sampled. */
  readonly #keys: (readonly string[] | undefined)[] = [];
  #base = 0;
  #yielded = 0;
  readonly #want = new Map<string, number>();

  /** `clips`: clips of the pass's first video already done with (a resumed pass skips them). */
  constructor(batchSize: number, clips = 0) {
    this.#batchSize = batchSize;
    this.#clips = clips;
  }

  /** Videos done with since the pass began: the pass's first video plus this is where it resumes. */
  get videos(): number {
    return this.#videos;
  }

  /** Clips of the video at `videos` done with: resuming samples it again and skips these. */
  get clips(): number {
    return this.#clips;
  }

  /** Logs the next video the source yields; returns its number in the pass (0 for the first). */
  yielded(): number {
    this.#keys.push(undefined);
    return this.#yielded++;
  }

  /** Video `seq` was sampled into clips with these keys (all of them, also any a resumed pass skips). */
  sampled(seq: number, keys: readonly string[]): void {
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
        const clipKeys = log[v];
        if (clipKeys === undefined || j >= clipKeys.length) {
          v++;
          j = 0;
          continue;
        }
        const key = clipKeys[j++] ?? '';
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
          `a batch (of ${keys.join(', ').slice(0, 200)}) is not a run of the clips sampled from the source (the video loader must keep input order)`,
        );
    }
    // Past the cell's last clip; at the end of a video, the next video.
    const ended = log[v];
    if (ended !== undefined && j >= ended.length) {
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
