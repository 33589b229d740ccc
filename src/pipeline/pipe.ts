/**
 * A `pipe` stage's runner: up to `concurrency` tasks in flight. What the two kinds share lives
 * here: taking input, starting tasks (synchronous, promise or generator), slots, failures and
 * shutdown. How results leave the stage is the subclass's: `OrderedPipe` (pipe-ordered.ts) emits
 * in input order through a ring, `UnorderedPipe` (pipe-unordered.ts) in completion order.
 *
 * Invariants, true whenever the runner is between awaits:
 * - A slot is held from #start until its result has left the stage (`release`): #inflight counts
 *   held slots, and the loop starts a task only while #inflight < concurrency (else it parks
 *   #slotWaiter). A finished task waiting for its turn, or for room downstream, still holds its
 *   slot, so the stage never holds more than `concurrency` results.
 * - #unsettled counts async tasks (promises, generators) that have not settled; loop()'s finally
 *   waits (#idleWaiter) until it is 0, so no task outlives the stage.
 * - Every input is counted once: ok, filtered (FILTERED) or failed (the failure budget sees it).
 * - After a stop nothing is delivered: late results are disposed, and so is whatever the subclass
 *   still holds (`discardWaiting`).
 *
 * A synchronous function whose result fits in the output queue completes without allocating a
 * promise.
 */
import type { RunContext } from './context.ts';
import { discard } from './dispose.ts';
import type { Executor } from './executor.ts';
import { type BoundedQueue, CLOSED, EMPTY } from './queue.ts';
import { resourceWaits, type StageCounters } from './counters.ts';
import { FILTERED, type FailureBudget, isEpochEnd, type PipeConfig, type StageContext, type StageFn } from './types.ts';

/** Result of a failed task: emits nothing. */
export const NOTHING: unique symbol = Symbol('tandem.nothing');

type TaskIterator = Iterator<unknown> | AsyncIterator<unknown>;

/** How a generator task ended: values it handed on, whether it threw, whether the run stopped. */
export interface GeneratorEnd {
  readonly produced: number;
  readonly failed: boolean;
  readonly stopped: boolean;
}

function isThenable(r: unknown): r is PromiseLike<unknown> {
  return typeof r === 'object' && r !== null && typeof (r as { then?: unknown }).then === 'function';
}

function isIterator(r: unknown): r is TaskIterator {
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof (r as { next?: unknown }).next === 'function' &&
    (Symbol.iterator in r || Symbol.asyncIterator in r)
  );
}

export abstract class PipeRunner {
  protected readonly concurrency: number;
  readonly #fn: StageFn<unknown, unknown> | undefined;
  readonly #exec: Executor | undefined;
  readonly #fnCtx: StageContext;
  readonly #budget: FailureBudget | undefined;
  #inflight = 0;
  #unsettled = 0;
  #nextSeq = 0;
  #slotWaiter: (() => void) | null = null;
  #idleWaiter: (() => void) | null = null;

  constructor(
    cfg: PipeConfig,
    private readonly input: BoundedQueue<unknown>,
    protected readonly output: BoundedQueue<unknown>,
    protected readonly run: RunContext,
    readonly stats: StageCounters,
    exec: Executor | undefined,
  ) {
    this.concurrency = cfg.concurrency;
    this.#exec = exec;
    this.#fn = typeof cfg.task === 'function' ? cfg.task : undefined;
    // One context per stage, shared by its tasks: the resource-wait bracket works on slot levels,
    // so it need not know which task is waiting.
    this.#fnCtx = Object.freeze({ signal: run.signal, stage: cfg.name, ...resourceWaits(stats) });
    this.#budget = cfg.budget;
  }

  /**
   * Takes a finished task's result (`v`: a value, FILTERED or NOTHING, already counted) out of the
   * stage, now or later; its slot is released once it has left. `now` is when the task ended.
   * Returns a promise only when the result is waiting for room downstream.
   */
  protected abstract emit(seq: number, v: unknown, now: number): Promise<void> | undefined;

  /** Runs a generator task to its end (see `iterate`), then emits or accounts for what it gave. */
  protected abstract runGenerator(it: TaskIterator, item: unknown, seq: number): Promise<void>;

  /** Disposes results still waiting inside the stage when the run stopped. */
  protected abstract discardWaiting(): void;

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
        if (this.#inflight >= this.concurrency) {
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
      if (run.stopped) this.discardWaiting();
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
      return this.finish(seq, NOTHING, false, now);
    }
    if (isThenable(r)) {
      this.#unsettled++;
      void this.#awaitTask(r, item, seq, t0);
      return undefined;
    }
    if (isIterator(r)) {
      this.#unsettled++;
      void this.runGenerator(r, item, seq).finally(() => this.#settle());
      return undefined;
    }
    const now = performance.now();
    s.task(now - t0);
    return this.finish(seq, r, false, now);
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
      if (!this.run.stopped) await this.finish(seq, v, false, now);
      else {
        this.stats.end(now);
        discard(v);
      }
    } finally {
      this.#settle();
    }
  }

  /**
   * Steps a generator task to its end, handing each value other than FILTERED to `take` (which
   * returns false when the value could not be delivered; the generator is then abandoned). A
   * throw fails the input once; what was taken before it stays taken. After a stop the value in
   * hand is disposed and the generator closed.
   */
  protected async iterate(it: TaskIterator, item: unknown, take: (v: unknown) => boolean | Promise<boolean>): Promise<GeneratorEnd> {
    let produced = 0;
    let busy = 0;
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
        // A value taken at once costs no await (most outputs, in both orderings).
        const taken = take(step.value);
        if (taken !== true && !(await taken)) break;
      }
    } catch (e) {
      failed = true;
      if (!this.run.stopped) this.#fail(item, e);
    } finally {
      if (this.run.stopped) await it.return?.();
    }
    this.stats.task(busy);
    return { produced, failed, stopped: this.run.stopped };
  }

  /**
   * Accounts for a finished task and emits its result. A task that failed after yielding outputs
   * was counted as failed already; its outputs still go out.
   */
  protected finish(seq: number, v: unknown, failed: boolean, now: number): Promise<void> | undefined {
    this.account(v, failed);
    return this.emit(seq, v, now);
  }

  protected account(v: unknown, failed: boolean): void {
    const s = this.stats;
    if (v === FILTERED) s.filtered++;
    else if (v !== NOTHING && !failed) s.ok++;
    // A rate budget may break exactly when `minItems` is reached, even without a new failure.
    const b = this.#budget;
    if (b?.minItems !== undefined && s.ok + s.filtered + s.failed === b.minItems) this.run.checkBudget(s, b);
  }

  /** The result of one task has left the stage (or was dropped): its slot is free. */
  protected release(): void {
    this.#inflight--;
    this.stats.inflight--;
    this.wake();
  }

  #fail(item: unknown, e: unknown): void {
    this.run.fail(this.stats, this.#budget, item, e);
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
