/**
 * Bounded FIFO between two stages. The hot path (`tryPut`/`tryGet`) is synchronous and allocates
 * nothing; promises are only made when a side actually has to wait. One consumer, any number of
 * producers (completion-ordered tasks put directly).
 */
import { discard } from './dispose.ts';

export const EMPTY: unique symbol = Symbol('tandem.queue.empty');
export const CLOSED: unique symbol = Symbol('tandem.queue.closed');

/** Told when a put() starts and stops waiting for room, with the queue's own timestamps. */
export interface PutObserver {
  blocked(now: number): void;
  unblocked(now: number): void;
}

export class BoundedQueue<T> {
  readonly capacity: number;
  // Observed counters, read by stats snapshots.
  gets = 0;
  fillSum = 0;
  putWaitMs = 0;
  getWaitMs = 0;
  /** When the consumer's current wait in get() began (0: not waiting), for live statistics. */
  getWaitingSince = 0;

  #buf: (T | undefined)[];
  #head = 0;
  #size = 0;
  #closed = false;
  #cancelled = false;
  #getWaiter: (() => void) | null = null;
  #putWaiters: (() => void)[] = [];

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`queue capacity must be a positive integer, got ${capacity}`);
    }
    this.capacity = capacity;
    this.#buf = new Array<T | undefined>(capacity);
  }

  get size(): number {
    return this.#size;
  }

  get cancelled(): boolean {
    return this.#cancelled;
  }

  tryPut(item: T): boolean {
    if (this.#size === this.capacity || this.#cancelled || this.#closed) return false;
    this.#buf[(this.#head + this.#size) % this.capacity] = item;
    this.#size++;
    const w = this.#getWaiter;
    if (w !== null) {
      this.#getWaiter = null;
      w();
    }
    return true;
  }

  /**
   * Resolves true once `item` is enqueued, false if the queue was cancelled (or closed) first;
   * then the item is discarded (disposed if it is disposable), since nobody will receive it.
   */
  async put(item: T, observer?: PutObserver): Promise<boolean> {
    while (!this.tryPut(item)) {
      if (this.#cancelled || this.#closed) {
        discard(item);
        return false;
      }
      const t0 = performance.now();
      observer?.blocked(t0);
      await new Promise<void>((resolve) => this.#putWaiters.push(resolve));
      const t1 = performance.now();
      this.putWaitMs += t1 - t0;
      observer?.unblocked(t1);
    }
    return true;
  }

  tryGet(): T | typeof EMPTY | typeof CLOSED {
    if (this.#cancelled) return CLOSED;
    if (this.#size === 0) return this.#closed ? CLOSED : EMPTY;
    const item = this.#buf[this.#head] as T;
    this.#buf[this.#head] = undefined;
    this.#head = (this.#head + 1) % this.capacity;
    this.fillSum += this.#size;
    this.#size--;
    this.gets++;
    const w = this.#putWaiters.shift();
    if (w !== undefined) w();
    return item;
  }

  async get(): Promise<T | typeof CLOSED> {
    for (;;) {
      const item = this.tryGet();
      if (item !== EMPTY) return item;
      const t0 = performance.now();
      this.getWaitingSince = t0;
      await new Promise<void>((resolve) => {
        this.#getWaiter = resolve;
      });
      this.getWaitingSince = 0;
      this.getWaitMs += performance.now() - t0;
    }
  }

  /** The producer is done: the consumer drains what is buffered, then sees CLOSED. */
  close(): void {
    this.#closed = true;
    this.#wakeAll();
  }

  /** Stop: buffered items are discarded (disposed) and every waiter wakes to find CLOSED / false. */
  cancel(): void {
    this.#cancelled = true;
    for (let i = 0; i < this.#size; i++) discard(this.#buf[(this.#head + i) % this.capacity]);
    this.#buf.fill(undefined);
    this.#size = 0;
    this.#wakeAll();
  }

  #wakeAll(): void {
    const g = this.#getWaiter;
    this.#getWaiter = null;
    if (g !== null) g();
    const puts = this.#putWaiters;
    this.#putWaiters = [];
    for (const w of puts) w();
  }
}
