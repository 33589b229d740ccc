/**
 * Gives the event loop a turn when the pipeline has kept it busy with promise callbacks alone. An
 * in-memory source feeding synchronous or promise-only stages never lets timers or I/O run: a
 * stop() or an abort scheduled from a timer, the statistics interval and stall timeouts would all
 * wait for the last item. A timer armed at the last turn tells whether a turn has happened since;
 * after `budgetMs` without one, the source waits for it. When turns happen on their own (I/O,
 * pool threads) this costs one timer per turn and never waits.
 */
export class EventLoopTurns {
  #turned = true;
  #armedAt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #waiting: (() => void) | undefined;

  constructor(private readonly budgetMs = 50) {}

  /** undefined to go on at once, or a promise that resolves after the event loop's next turn. */
  due(): Promise<void> | undefined {
    const now = performance.now();
    if (this.#turned) {
      this.#turned = false;
      this.#armedAt = now;
      this.#timer = setTimeout(() => this.#turn(), 0);
      return undefined;
    }
    if (now - this.#armedAt < this.budgetMs) return undefined;
    return new Promise<void>((resolve) => {
      this.#waiting = resolve;
    });
  }

  /** Clears the pending timer (nothing of the pipeline may outlive it) and releases a waiter. */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#turn();
  }

  #turn(): void {
    this.#turned = true;
    this.#timer = undefined;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.();
  }
}
