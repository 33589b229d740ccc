// How far the consumer has come through the source. The loader keeps input order and a batch is a
// run of consecutive source items (its failed ones left out, later rows moved into their slots),
// so once a batch is consumed every item up to the furthest of its rows is done with: the position
// is that item's step + 1. Keys are logged as the source yields them; a batch's keys are matched
// against the oldest logged ones first, so a key repeated in a later epoch is not taken early.
import { InternalError } from '../errors/index.ts';

export class SourcePosition {
  #position: number;
  /** Keys yielded but not yet covered by a consumed batch, oldest first, from #head. */
  readonly #pending: string[] = [];
  #head = 0;
  readonly #want = new Map<string, number>();

  constructor(start = 0) {
    this.#position = start;
  }

  /** Items of the source done with: the step the source resumes from. */
  get position(): number {
    return this.#position;
  }

  /** Logs the key of the next item the source yields. */
  yielded(key: string): void {
    this.#pending.push(key);
  }

  /** Wraps an async source so its keys are logged. */
  async *trackAsync<T extends { key: string }>(items: AsyncIterable<T>): AsyncGenerator<T> {
    for await (const item of items) {
      this.yielded(item.key);
      yield item;
    }
  }

  /** Wraps the source so its keys are logged; starts `skip` items in (resuming). */
  *track<T extends { key: string }>(items: Iterable<T>, skip: number): Generator<T> {
    let index = 0;
    for (const item of items) {
      if (index++ < skip) continue;
      this.yielded(item.key);
      yield item;
    }
  }

  /** A batch with these row keys was consumed. */
  consumed(keys: readonly string[]): void {
    if (keys.length === 0) return;
    const want = this.#want;
    want.clear();
    for (const key of keys) want.set(key, (want.get(key) ?? 0) + 1);
    let left = keys.length;
    for (let i = this.#head; i < this.#pending.length; i++) {
      const key = this.#pending[i] ?? '';
      const n = want.get(key);
      if (n === undefined || n === 0) continue;
      want.set(key, n - 1);
      if (--left > 0) continue;
      this.#position += i - this.#head + 1;
      this.#head = i + 1;
      if (this.#head > 4096) {
        this.#pending.splice(0, this.#head);
        this.#head = 0;
      }
      return;
    }
    throw new InternalError(
      `a batch row (of ${keys.join(', ').slice(0, 200)}) was never yielded by the source (the loader must keep input order)`,
    );
  }
}
