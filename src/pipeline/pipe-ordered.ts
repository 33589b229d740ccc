/**
 * A `pipe` stage that emits results in input order (`ordered: 'input'`, concurrency > 1).
 *
 *   input ──start(seq)──▶ task ──finish──▶ ring[seq % c] ──pump, in seq order──▶ output
 *           slot taken                     ready = 1        #emitSeq++, slot released
 *
 * Invariants, besides PipeRunner's:
 * - #emitSeq ≤ next sequence number, and (next − #emitSeq) ≤ held slots ≤ c: at most c sequence
 *   numbers are open, so a ring cell is never overwritten before it is emitted.
 * - Task `seq` writes its result to #ring[seq % c] and sets #ready there; #pump emits strictly in
 *   sequence from #emitSeq. A failure (NOTHING) or FILTERED advances #emitSeq without emitting.
 *   A generator's outputs wait as one Outputs value.
 * - #emitting makes #pump non-reentrant: while one caller waits for room downstream (#pumpSlow),
 *   others only fill the ring.
 */
import type { RunContext } from './context.ts';
import { discard } from './dispose.ts';
import type { Executor } from './executor.ts';
import { NOTHING, PipeRunner } from './pipe.ts';
import type { BoundedQueue } from './queue.ts';
import type { StageCounters } from './counters.ts';
import { FILTERED, type PipeConfig } from './types.ts';

/** Outputs of a generator task, buffered because earlier inputs are still running. */
class Outputs {
  constructor(readonly items: unknown[]) {}
}

export class OrderedPipe extends PipeRunner {
  readonly #ring: unknown[];
  readonly #ready: Uint8Array;
  #emitSeq = 0;
  #emitting = false;

  constructor(
    cfg: PipeConfig,
    input: BoundedQueue<unknown>,
    output: BoundedQueue<unknown>,
    run: RunContext,
    stats: StageCounters,
    exec: Executor | undefined,
  ) {
    super(cfg, input, output, run, stats, exec);
    this.#ring = new Array<unknown>(this.concurrency);
    this.#ready = new Uint8Array(this.concurrency);
  }

  protected emit(seq: number, v: unknown, now: number): Promise<void> | undefined {
    const i = seq % this.concurrency;
    this.#ring[i] = v;
    this.#ready[i] = 1;
    this.stats.enqueue(now);
    return this.#pump(now);
  }

  protected async runGenerator(it: Iterator<unknown> | AsyncIterator<unknown>, item: unknown, seq: number): Promise<void> {
    const buffered: unknown[] = [];
    const end = await this.iterate(it, item, (v) => buffered.push(v) > 0);
    const now = performance.now();
    if (end.stopped) {
      this.stats.end(now);
      buffered.forEach(discard);
      return;
    }
    // What the generator yielded before it threw is delivered; the input is counted as failed.
    let result: unknown;
    if (end.failed) result = buffered.length > 0 ? new Outputs(buffered) : NOTHING;
    else result = end.produced === 0 ? FILTERED : new Outputs(buffered);
    await this.finish(seq, result, end.failed, now);
  }

  protected discardWaiting(): void {
    for (let i = 0; i < this.#ring.length; i++) {
      const v = this.#ring[i];
      this.#ring[i] = undefined;
      if (v instanceof Outputs) v.items.forEach(discard);
      else discard(v);
    }
  }

  #pump(now: number): Promise<void> | undefined {
    if (this.#emitting) return undefined;
    const c = this.concurrency;
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
      this.release();
    }
  }

  async #pumpSlow(v: unknown): Promise<void> {
    try {
      const items = v instanceof Outputs ? v.items : [v];
      for (let k = 0; k < items.length; k++) {
        if (!(await this.output.put(items[k]))) {
          items.slice(k + 1).forEach(discard);
          return;
        }
        this.stats.out++;
      }
      this.#emitSeq++;
      this.stats.emitted(performance.now());
      this.release();
    } finally {
      this.#emitting = false;
    }
    if (!this.run.stopped) await this.#pump(performance.now());
  }
}
