/**
 * A `pipe` stage that emits results as they complete (`ordered: 'completion'`, or a single task
 * in flight, where both orders agree). A result leaves at once, or waits for room downstream
 * holding its slot; a generator's outputs go downstream as they are yielded.
 */
import { NOTHING, PipeRunner } from './pipe.ts';
import { FILTERED } from './types.ts';

export class UnorderedPipe extends PipeRunner {
  protected emit(_seq: number, v: unknown, now: number): Promise<void> | undefined {
    const s = this.stats;
    if (v === FILTERED || v === NOTHING) {
      s.end(now);
      this.release();
      return undefined;
    }
    if (this.output.tryPut(v)) {
      s.out++;
      s.end(now);
      this.release();
      return undefined;
    }
    s.hold(now);
    return this.#emitSlow(v);
  }

  protected async runGenerator(it: Iterator<unknown> | AsyncIterator<unknown>, item: unknown): Promise<void> {
    const end = await this.iterate(it, item, this.#forward);
    const now = performance.now();
    if (end.stopped) {
      this.stats.end(now);
      return;
    }
    // Outputs were streamed already; only the accounting and the slot remain.
    this.account(end.failed ? NOTHING : end.produced === 0 ? FILTERED : undefined, end.failed);
    this.stats.end(now);
    this.release();
  }

  protected discardWaiting(): void {
    // Nothing waits inside the stage: a result is either downstream or still in its task, which
    // disposes it when it sees the stop.
  }

  /** Hands one generator output downstream; a field, so generator tasks share one function. */
  readonly #forward = (v: unknown): boolean | Promise<boolean> => {
    if (this.output.tryPut(v)) {
      this.stats.out++;
      return true;
    }
    // A put that fails (the run stopped) has disposed the value itself.
    return this.output.put(v, this.stats.holdWhileBlocked).then((delivered) => {
      if (delivered) this.stats.out++;
      return delivered;
    });
  };

  async #emitSlow(v: unknown): Promise<void> {
    if (await this.output.put(v)) this.stats.out++;
    this.stats.release(performance.now());
    this.release();
  }
}
