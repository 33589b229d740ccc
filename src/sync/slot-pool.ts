// One pool of reusable slots (decode job records, batch buffers, GPU upload slots) for everything
// that hands out a fixed set of resources and takes them back.
import { invariant } from '../errors/index.ts';
import { waitInLine } from './wait.ts';

/**
 * A fixed set of slots lent out one at a time. The rules:
 * - `acquire` takes a free slot at once, or joins the line and gets the next one released, in
 *   the order callers joined; a caller whose signal aborts leaves the line with the signal's
 *   reason, and the slot goes to the next in line, never to nobody.
 * - `release` hands the slot straight to the first in line, else puts it back among the free.
 *   Releasing a slot that is not lent out is the caller's bug, and throws.
 * - Nothing is allocated per acquire or release beyond the line's waiter.
 */
export class SlotPool<T> {
  readonly #all: readonly T[];
  readonly #free: T[];
  readonly #line: Array<(slot: T) => void> = [];
  readonly #lent = new Set<T>();

  constructor(slots: Iterable<T>) {
    this.#all = [...slots];
    this.#free = [...this.#all];
  }

  /** Every slot, lent or not (to free their memory when the owner closes). */
  get slots(): readonly T[] {
    return this.#all;
  }

  get size(): number {
    return this.#all.length;
  }

  /** Slots not lent out. */
  get available(): number {
    return this.#free.length;
  }

  /** Callers waiting in line. */
  get waiting(): number {
    return this.#line.length;
  }

  /** A free slot now, or undefined. */
  tryAcquire(): T | undefined {
    const slot = this.#free.pop();
    if (slot !== undefined) this.#lent.add(slot);
    return slot;
  }

  /** A free slot, waiting in line for one if need be; rejects with the signal's reason on abort. */
  async acquire(signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    const now = this.tryAcquire();
    if (now !== undefined) return now;
    return waitInLine(this.#line, signal);
  }

  release(slot: T): void {
    invariant(this.#lent.has(slot), 'SlotPool: released a slot that was not lent out');
    const next = this.#line.shift();
    if (next) {
      next(slot); // stays lent, to the next in line
      return;
    }
    this.#lent.delete(slot);
    this.#free.push(slot);
  }
}
