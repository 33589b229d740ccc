/** A probe for the pipeline scenarios: proves a stop leaves no task or timer running. */
import { sleep } from './async.ts';

/** Counts tasks started / settled and timers pending, to prove a stop leaves nothing running. */
export class Probe {
  started = 0;
  settled = 0;
  timers = 0;

  async task<T>(ms: number, signal: AbortSignal, value: T): Promise<T> {
    this.started++;
    this.timers++;
    try {
      await sleep(ms, signal);
      return value;
    } finally {
      this.timers--;
      this.settled++;
    }
  }

  get live(): number {
    return this.started - this.settled;
  }
}
