/**
 * A `pipe` stage: up to `concurrency` tasks in flight, results emitted in input order (a ring
 * indexed by sequence number) or in completion order. A synchronous function whose result fits
 * in the output queue completes without allocating a promise.
 */
import type { RunContext } from './context.ts';
import type { Executor } from './executor.ts';
import { discard } from './dispose.ts';
import { type BoundedQueue, CLOSED, EMPTY } from './queue.ts';
import { resourceWaits, type StageCounters } from './stats.ts';
import { FILTERED, type FailureBudget, isEpochEnd, type PipeConfig, type StageContext, type StageFn } from './types.ts';

/** Ring value of a failed task: emits nothing. */
const NOTHING: unique symbol = Symbol('tandem.nothing');

/** Outputs of a generator task, buffered because earlier inputs are still running. */
class Outputs {
  constructor(readonly items: unknown[]) {}
}

function isThenable(r: unknown): r is PromiseLike<unknown> {
  return typeof r === 'object' && r !== null && typeof (r as { then?: unknown }).then === 'function';
}

function isIterator(r: unknown): r is Iterator<unknown> | AsyncIterator<unknown> {
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof (r as { next?: unknown }).next === 'function' &&
    (Symbol.iterator in r || Symbol.asyncIterator in r)
  );
}

/**
 * Invariants, true whenever the runner is between awaits:
 *
 *   #emitSeq ≤ #nextSeq,   #nextSeq − #emitSeq ≤ #inflight ≤ #c   (ordered mode)
 *
 * - A slot is held from #start until its result has left the stage (#release): #inflight counts
 *   held slots, and the loop starts a task only while #inflight < #c (else it parks #slotWaiter).
 *   A finished task waiting for its turn, or for room in the output queue, still holds its slot.
 * - #unsettled counts async tasks (promises, generators) that have not settled; loop()'s finally
 *   waits (#idleWaiter) until it is 0, so no task outlives the stage.
 * - Ordered mode: task `seq` writes its value to #ring[seq % #c] and sets #ready there; #pump
 *   emits strictly in sequence from #emitSeq, so a slot of the ring is never overwritten before it
 *   is emitted (at most #c sequence numbers are open). A failure (NOTHING) or FILTERED advances
 *   #emitSeq without emitting. Generator outputs wait as one Outputs value.
 * - #emitting makes #pump non-reentrant: while one caller waits for room downstream (#pumpSlow),
 *   others only fill the ring.
 * - On stop, results still in the ring are disposed (#discardWaiting), never delivered.
 *
 *   input ──#start(seq)──▶ task ──#finish──▶ ring[seq % c] ──#pump (in seq order)──▶ output
 *            #inflight++                      ready = 1         #emitSeq++, #release
 */
export class PipeRunner {
  readonly #c: number;
  /** Input order with more than one task in flight needs the ring; otherwise emit directly. */
  readonly #ordered: boolean;
  readonly #fn: StageFn<unknown, unknown> | undefined;
  readonly #exec: Executor | undefined;
  readonly #fnCtx: StageContext;
  readonly #budget: FailureBudget | undefined;
  readonly #ring: unknown[];
  readonly #ready: Uint8Array;
  #inflight = 0;
  #unsettled = 0;
  #nextSeq = 0;
  #emitSeq = 0;
  #emitting = false;
  #slotWaiter: (() => void) | null = null;
  #idleWaiter: (() => void) | null = null;

  constructor(
    cfg: PipeConfig,
    private readonly input: BoundedQueue<unknown>,
    private readonly output: BoundedQueue<unknown>,
    private readonly run: RunContext,
    readonly stats: StageCounters,
    exec: Executor | undefined,
  ) {
    this.#c = cfg.concurrency;
    this.#ordered = cfg.ordered === 'input' && cfg.concurrency > 1;
    this.#exec = exec;
    this.#fn = typeof cfg.task === 'function' ? cfg.task : undefined;
    // One context per stage, shared by its tasks: the resource-wait bracket works on slot levels,
    // so it need not know which task is waiting.
    this.#fnCtx = Object.freeze({ signal: run.signal, stage: cfg.name, ...resourceWaits(stats) });
    this.#budget = cfg.budget;
    this.#ring = new Array<unknown>(this.#c);
    this.#ready = new Uint8Array(this.#c);
  }

  /** Wakes a loop blocked on a free slot so that it can notice the stop. */
  wake(): void {
    const w = this.#slotWaiter;
    this.#slotWaiter = null;
    if (w !== null) w();
  }

  async loop(): Promise<void> {
    const { input, run } = this;
    try {
      for (;;) {
        if (this.#inflight >= this.#c) {
          await this.#waitSlot();
          if (run.stopped) return;
          continue;
        }
        let item = input.tryGet();
        if (item === EMPTY) item = await input.get();
        if (item === CLOSED || run.stopped) break;
        if (isEpochEnd(item)) {
          await this.#drain();
          if (run.stopped || !(await this.output.put(item, this.stats.loopWhileBlocked))) return;
          continue;
        }
        const pending = this.#start(item);
        if (pending !== undefined) {
          // A synchronous result is waiting for room downstream: the loop, and so every free
          // slot, is blocked on output until it leaves.
          this.stats.blockLoop(performance.now());
          await pending;
          this.stats.unblockLoop(performance.now());
        }
      }
      await this.#drain();
    } finally {
      while (this.#unsettled > 0) {
        await new Promise<void>((resolve) => {
          this.#idleWaiter = resolve;
        });
      }
      if (run.stopped) this.#discardWaiting();
    }
  }

  /** Results that were waiting for their turn when the run stopped: nobody will receive them. */
  #discardWaiting(): void {
    for (let i = 0; i < this.#ring.length; i++) {
      const v = this.#ring[i];
      this.#ring[i] = undefined;
      if (v instanceof Outputs) v.items.forEach(discard);
      else discard(v);
    }
  }

  #start(item: unknown): Promise<void> | undefined {
    const seq = this.#nextSeq++;
    const s = this.stats;
    s.in++;
    s.inflight++;
    this.#inflight++;
    const t0 = performance.now();
    s.begin(t0);
    let r: unknown;
    try {
      // Exactly one of fn / exec is set (checked at build).
      r = this.#exec !== undefined ? this.#exec.run(item, this.run.signal) : this.#fn!(item, this.#fnCtx);
    } catch (e) {
      const now = performance.now();
      s.task(now - t0);
      this.#fail(item, e);
      return this.#finish(seq, NOTHING, false, now);
    }
    if (isThenable(r)) {
      this.#unsettled++;
      void this.#awaitTask(r, item, seq, t0);
      return undefined;
    }
    if (isIterator(r)) {
      this.#unsettled++;
      void this.#runGenerator(r, item, seq);
      return undefined;
    }
    const now = performance.now();
    s.task(now - t0);
    return this.#finish(seq, r, false, now);
  }

  async #awaitTask(p: PromiseLike<unknown>, item: unknown, seq: number, t0: number): Promise<void> {
    let v: unknown = NOTHING;
    try {
      v = await p;
    } catch (e) {
      if (!this.run.stopped) this.#fail(item, e);
    }
    const now = performance.now();
    this.stats.task(now - t0);
    try {
      if (!this.run.stopped) await this.#finish(seq, v, false, now);
      else {
        this.stats.end(now);
        discard(v);
      }
    } finally {
      this.#settle();
    }
  }

  async #runGenerator(it: Iterator<unknown> | AsyncIterator<unknown>, item: unknown, seq: number): Promise<void> {
    const buffered: unknown[] | undefined = this.#ordered ? [] : undefined;
    let produced = 0;
    let busy = 0;
    let result: unknown = NOTHING;
    let failed = false;
    try {
      for (;;) {
        const t = performance.now();
        const step = await it.next();
        busy += performance.now() - t;
        if (step.done === true) break;
        if (this.run.stopped) {
          discard(step.value);
          break;
        }
        if (step.value === FILTERED) continue;
        produced++;
        if (buffered !== undefined) buffered.push(step.value);
        else if (!this.output.tryPut(step.value) && !(await this.output.put(step.value, this.stats.holdWhileBlocked))) break;
        if (buffered === undefined) this.stats.out++;
      }
      result = produced === 0 ? FILTERED : buffered !== undefined ? new Outputs(buffered) : undefined;
    } catch (e) {
      // What the generator yielded before it threw is delivered, in both orderings; the input
      // is counted once, as failed.
      failed = true;
      if (buffered !== undefined && buffered.length > 0) result = new Outputs(buffered);
      if (!this.run.stopped) this.#fail(item, e);
    } finally {
      if (this.run.stopped) await it.return?.();
    }
    this.stats.task(busy);
    const now = performance.now();
    try {
      if (this.run.stopped) {
        this.stats.end(now);
        for (const x of buffered ?? []) discard(x);
        return;
      }
      if (buffered === undefined) {
        // Outputs were streamed already; only the accounting and the slot remain.
        if (result === FILTERED) this.stats.filtered++;
        else if (result !== NOTHING && !failed) this.stats.ok++;
        this.#counted();
        this.stats.end(now);
        this.#release();
      } else {
        await this.#finish(seq, result, failed, now);
      }
    } finally {
      this.#settle();
    }
  }

  /**
   * Accounts for a finished task and emits its result (now, or when its turn comes). A task that
   * failed after yielding outputs was counted as failed already; its outputs still go out.
   * `now` is when the task ended; its slot is still counted as working until here.
   */
  #finish(seq: number, v: unknown, failed: boolean, now: number): Promise<void> | undefined {
    const s = this.stats;
    if (v === FILTERED) s.filtered++;
    else if (v !== NOTHING && !failed) s.ok++;
    this.#counted();
    if (!this.#ordered) {
      if (v === FILTERED || v === NOTHING) {
        s.end(now);
        this.#release();
        return undefined;
      }
      if (this.output.tryPut(v)) {
        s.out++;
        s.end(now);
        this.#release();
        return undefined;
      }
      s.hold(now);
      return this.#emitSlow(v);
    }
    const i = seq % this.#c;
    this.#ring[i] = v;
    this.#ready[i] = 1;
    s.enqueue(now);
    return this.#pump(now);
  }

  async #emitSlow(v: unknown): Promise<void> {
    if (await this.output.put(v)) this.stats.out++;
    this.stats.release(performance.now());
    this.#release();
  }

  #pump(now: number): Promise<void> | undefined {
    if (this.#emitting) return undefined;
    const c = this.#c;
    for (;;) {
      const i = this.#emitSeq % c;
      if (this.#ready[i] !== 1) return undefined;
      const v = this.#ring[i];
      this.#ring[i] = undefined;
      this.#ready[i] = 0;
      if (v instanceof Outputs || (v !== NOTHING && v !== FILTERED && !this.output.tryPut(v))) {
        this.#emitting = true;
        this.stats.dequeueBlocked(now);
        return this.#pumpSlow(v);
      }
      if (v !== NOTHING && v !== FILTERED) this.stats.out++;
      this.#emitSeq++;
      this.stats.dequeue(now);
      this.#release();
    }
  }

  async #pumpSlow(v: unknown): Promise<void> {
    try {
      const items = v instanceof Outputs ? v.items : [v];
      for (let k = 0; k < items.length; k++) {
        const x = items[k];
        if (!(await this.output.put(x))) {
          items.slice(k + 1).forEach(discard);
          return;
        }
        this.stats.out++;
      }
      this.#emitSeq++;
      this.stats.emitted(performance.now());
      this.#release();
    } finally {
      this.#emitting = false;
    }
    if (!this.run.stopped) await this.#pump(performance.now());
  }

  #fail(item: unknown, e: unknown): void {
    this.run.fail(this.stats, this.#budget, item, e);
  }

  /** A rate budget may break exactly when `minItems` is reached, even without a new failure. */
  #counted(): void {
    const b = this.#budget;
    if (b?.minItems !== undefined) {
      const s = this.stats;
      if (s.ok + s.filtered + s.failed === b.minItems) this.run.checkBudget(s, b);
    }
  }

  #release(): void {
    this.#inflight--;
    this.stats.inflight--;
    this.wake();
  }

  #settle(): void {
    this.#unsettled--;
    if (this.#unsettled === 0) {
      const w = this.#idleWaiter;
      this.#idleWaiter = null;
      if (w !== null) w();
    }
  }

  #waitSlot(): Promise<void> {
    // After a stop nothing releases slots any more, and stop()'s wake() may already have run.
    if (this.run.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#slotWaiter = resolve;
    });
  }

  async #drain(): Promise<void> {
    while (this.#inflight > 0 && !this.run.stopped) await this.#waitSlot();
  }
}
