// How far the consumer has come through a pass of the video loader, as (videos done, clips of the
// next video done). Each video of the order becomes its clips, in order; a batch is a run of
// consecutive clips (failed ones left out, later clips moved into their slots), so once a batch is
// consumed every clip up to the furthest of its rows is done with, also the failed ones and every
// video before it that failed as a whole. Per video the log holds its clip keys (the array the
// sampler's keys were made into, set when it is sampled; undefined while it is not, or never, as
// for a video that failed); a batch's keys are matched against the oldest logged clips first, so a
// key repeated in a later epoch is not taken early. Nothing is allocated per clip.
import { InternalError } from '../errors/index.ts';

export class ClipPosition {
  /** Videos of the pass done with (from its first), and clips of the next one done with. */
  #videos = 0;
  #clips: number;
  /** Per video yielded, from #base: its clip keys once sampled. */
  readonly #keys: (readonly string[] | undefined)[] = [];
  #base = 0;
  #yielded = 0;
  readonly #want = new Map<string, number>();

  /** `clips`: clips of the pass's first video already done with (a resumed pass skips them). */
  constructor(clips = 0) {
    this.#clips = clips;
  }

  /** Videos done with since the pass began: the pass's first video plus this is where it resumes. */
  get videos(): number {
    return this.#videos;
  }

  /** Clips of the video at `videos` done with: resuming re-samples it and skips these. */
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

  /** A batch with these row keys was consumed. */
  consumed(keys: readonly string[]): void {
    if (keys.length === 0) return;
    const want = this.#want;
    want.clear();
    for (const key of keys) want.set(key, (want.get(key) ?? 0) + 1);
    let left = keys.length;
    const log = this.#keys;
    let j = this.#clips;
    for (let v = this.#videos - this.#base; v < log.length; v++, j = 0) {
      // Not sampled: the video failed as a whole (a later video's clip in this batch means it is past).
      const clipKeys = log[v];
      if (clipKeys === undefined) continue;
      for (; j < clipKeys.length; j++) {
        const key = clipKeys[j] ?? '';
        const n = want.get(key);
        if (n === undefined || n === 0) continue;
        want.set(key, n - 1);
        if (--left > 0) continue;
        const last = j + 1 === clipKeys.length;
        this.#videos = this.#base + v + (last ? 1 : 0);
        this.#clips = last ? 0 : j + 1;
        this.#compact();
        return;
      }
    }
    throw new InternalError(
      `a batch row (of ${keys.join(', ').slice(0, 200)}) was never sampled from the source (the video loader must keep input order)`,
    );
  }

  #compact(): void {
    const done = this.#videos - this.#base;
    if (done <= 4096) return;
    this.#keys.splice(0, done);
    this.#base += done;
  }
}
