// The engine's accounting of each stage, on the hot path: counts, a reservoir of task times, and
// the slot-state machine whose levels are integrated into working, blocked and resource time.
// Snapshots are built from these counters in stats.ts; nothing here formats or judges.
import { Rng } from '../random/index.ts';
import type { PutObserver } from './queue.ts';

const RESERVOIR = 1024;

/** Fixed-size uniform sample of task times (Vitter's algorithm R), so memory stays flat. */
export class Reservoir {
  #samples = new Float64Array(RESERVOIR);
  #seen = 0;
  readonly #rng = new Rng(0x9e3779b9);

  add(x: number): void {
    const i = this.#seen++;
    if (i < RESERVOIR) {
      this.#samples[i] = x;
      return;
    }
    const j = this.#rng.int(i + 1); // the project's seeded generator: deterministic, allocation free
    if (j < RESERVOIR) this.#samples[j] = x;
  }

  percentiles(): { p50: number; p90: number; p99: number } {
    const n = Math.min(this.#seen, RESERVOIR);
    if (n === 0) return { p50: 0, p90: 0, p99: 0 };
    const s = this.#samples.slice(0, n).sort();
    const at = (q: number): number => s[Math.min(n - 1, Math.floor(q * n))] ?? 0;
    return { p50: at(0.5), p90: at(0.9), p99: at(0.99) };
  }
}

/**
 * Per-stage counters. Time is integrated from slot levels: every change of state first calls
 * `tick(now)`, which adds (now − last change) × slots in each state. No allocation, one
 * `performance.now()` per state change (the hot path already took one per task start and end).
 */
export class StageCounters {
  in = 0;
  out = 0;
  filtered = 0;
  failed = 0;
  tasks = 0;
  /** Inputs that completed without failing or being filtered. */
  ok = 0;
  inflight = 0;
  /** Sum of task wall times (for taskMs); the time split below is what names the bottleneck. */
  taskMsSum = 0;
  firstError: unknown = undefined;
  readonly times = new Reservoir();
  /** Slots running the stage's own code. */
  working = 0;
  /** Slots inside a resource wait (`beginWait` … `endWait`). */
  waiting = 0;
  /** Slots whose result is being put into a full output queue. */
  holding = 0;
  /**
   * Input-ordered stages: finished results waiting in the ring for their turn. They count as
   * blocked while the ring's emitter waits on the output queue (`emitBlocked`), and as working
   * otherwise: then they wait for an earlier input of the same stage, which is the stage's own
   * time (head-of-line), not backpressure.
   */
  queued = 0;
  emitBlocked = 0;
  /** > 0 while the stage loop itself waits on its output queue: its free slots are blocked too. */
  loopBlocked = 0;
  workingMs = 0;
  resourceMs = 0;
  blockedMs = 0;
  #t = 0;
  #frozen = false;
  /** For `queue.put(x, …)`: a working slot holds its output while the put waits. */
  readonly holdWhileBlocked: PutObserver = { blocked: (now) => this.hold(now), unblocked: (now) => this.unhold(now) };
  /** For `queue.put(x, …)` from a stage loop: the loop (every free slot) is blocked while it waits. */
  readonly loopWhileBlocked: PutObserver = { blocked: (now) => this.blockLoop(now), unblocked: (now) => this.unblockLoop(now) };

  constructor(
    readonly name: string,
    readonly kind: string,
    readonly concurrency: number,
  ) {}

  /** Integrates up to `now`, the end of the run, and stops counting time. */
  freeze(now: number): void {
    this.tick(now);
    this.#frozen = true;
  }

  task(ms: number): void {
    this.tasks++;
    this.taskMsSum += ms;
    this.times.add(ms);
  }

  /**
   * Integrates the slot levels up to `now` (a time before the last change adds nothing). After
   * `freeze`, nothing more is added: the statistics cover the pipeline's run, and a consumer still
   * taking the last queued items after it must not count time the elapsed time does not hold.
   */
  tick(now: number): void {
    if (this.#frozen) return;
    const dt = now - this.#t;
    if (!(dt > 0)) return;
    this.#t = now;
    let w = this.working > 0 ? this.working : 0;
    let b = this.holding > 0 ? this.holding : 0;
    const r = this.waiting > 0 ? this.waiting : 0;
    if (this.queued > 0) {
      if (this.emitBlocked > 0) b += this.queued;
      else w += this.queued;
    }
    if (this.loopBlocked > 0) b = this.concurrency - w - r;
    if (w > 0) this.workingMs += dt * w;
    if (r > 0) this.resourceMs += dt * r;
    if (b > 0) this.blockedMs += dt * b;
  }

  /** A slot starts running the stage's code. */
  begin(now: number): void {
    this.tick(now);
    this.working++;
  }

  /** A running slot is done and free again. */
  end(now: number): void {
    this.tick(now);
    this.working--;
  }

  /** A running slot now holds a result that cannot leave yet. */
  hold(now: number): void {
    this.tick(now);
    this.working--;
    this.holding++;
  }

  /** A holding slot goes back to running (a generator whose output was taken). */
  unhold(now: number): void {
    this.tick(now);
    this.holding--;
    this.working++;
  }

  /** A holding slot's result left: the slot is free. */
  release(now: number): void {
    this.tick(now);
    this.holding--;
  }

  /** Input order: a finished result goes into the ring to wait for its turn. */
  enqueue(now: number): void {
    this.tick(now);
    this.working--;
    this.queued++;
  }

  /** Input order: a result left the ring straight into the output queue; its slot is free. */
  dequeue(now: number): void {
    this.tick(now);
    this.queued--;
  }

  /** Input order: a result left the ring but the output is full: the emitter blocks. */
  dequeueBlocked(now: number): void {
    this.tick(now);
    this.queued--;
    this.holding++;
    this.emitBlocked++;
  }

  /** Input order: the blocked emitter's result left; its slot is free. */
  emitted(now: number): void {
    this.tick(now);
    this.holding--;
    this.emitBlocked--;
  }

  blockLoop(now: number): void {
    this.tick(now);
    this.loopBlocked++;
  }

  unblockLoop(now: number): void {
    this.tick(now);
    this.loopBlocked--;
  }

  /** A running slot starts waiting for a pooled resource. */
  beginWait(now: number): void {
    this.tick(now);
    this.working--;
    this.waiting++;
  }

  endWait(now: number): void {
    this.tick(now);
    this.waiting--;
    this.working++;
  }
}

/**
 * The `waitFor` / `beginWait` / `endWait` members of a stage context (and of `pipeline.consumer`):
 * made once per stage, so bracketing a wait allocates nothing beyond `waitFor`'s own promise.
 */
export interface ResourceWaits {
  waitFor<T>(wait: PromiseLike<T>): Promise<T>;
  beginWait(): void;
  endWait(): void;
}

export function resourceWaits(c: StageCounters): ResourceWaits {
  const beginWait = (): void => c.beginWait(performance.now());
  const endWait = (): void => c.endWait(performance.now());
  return {
    beginWait,
    endWait,
    async waitFor<T>(wait: PromiseLike<T>): Promise<T> {
      beginWait();
      try {
        return await wait;
      } finally {
        endWait();
      }
    },
  };
}
