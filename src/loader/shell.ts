// The one shell every loader stands on (loader(), videoLoader(), textLoader()): a media part says
// how to open its resources, how to build one pass's pipeline and how to close; the shell owns the
// rest, once, with one contract:
//
//   - one `for await` at a time ('busy'), none after close() ('closed');
//   - resources are opened on the first `for await`, once; a loader closed while they open builds
//     no pipeline, and the media part closes what it made when opening fails;
//   - the caller's signal closes the loader, and close() removes the listener (no leak per loader);
//   - close() is idempotent: it stops the pass, then closes the media part's resources;
//   - statistics, the bottleneck, failures (and their count), live stats and the consumer's waits
//     read the pass in progress, or the last one.
import { TandemError } from '../errors/index.ts';
import { bottleneck, formatStats, type Bottleneck, type FailureRecord, type Pipeline, type PipelineStats } from '../pipeline/index.ts';

export type LoaderErrorCode = 'busy' | 'closed';

/** The loader was iterated twice at once, or used after close(). */
export class LoaderError extends TandemError {
  override readonly name = 'LoaderError';
  constructor(
    readonly code: LoaderErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** What the pipeline's last stage hands out: every batch kind has its keys and a release(). */
export interface Releasable {
  readonly keys?: readonly string[];
  release(): void;
}

interface StatsListener {
  callback: (stats: PipelineStats) => void;
  intervalMs: number;
  stop: () => void;
}

/**
 * The shell. `R` is what the media part opened (closed by `closeOpened`), `D` what its pipeline
 * delivers, `B` what the consumer sees (D, typed for the caller).
 */
export abstract class LoaderShell<B, R, D extends Releasable> implements AsyncIterable<B>, AsyncDisposable {
  /** How errors and the summary name this loader ('loader', 'videoLoader', 'textLoader'). */
  protected abstract readonly loaderName: string;
  #opened: Promise<R> | undefined;
  #openedNow: R | undefined;
  #pipeline: Pipeline<D> | undefined;
  #running = false;
  #closed = false;
  readonly #failures: FailureRecord[] = [];
  #failureCount = 0;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = () => void this.close();
  readonly #statsListeners = new Set<StatsListener>();

  constructor(signal: AbortSignal | undefined) {
    this.#signal = signal;
    // Aborted already: no abort event will come, so the loader is closed from the start.
    if (signal?.aborted) this.#closed = true;
    else signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** Opens the media part's resources; on failure it closes whatever it made before throwing. */
  protected abstract openResources(): Promise<R>;
  /** One pass's pipeline over the opened resources. */
  protected abstract buildPass(opened: R): Pipeline<D>;
  /** Closes what openResources made (the caller's pool or device stay open). */
  protected abstract closeOpened(opened: R): Promise<void>;
  /** The consumer took `batch` (counted before it is handed out, so a state() taken then includes it). */
  protected batchTaken(_batch: D): void {}
  /** A pass ended: `finished` when it ran to its end, false after a break, an error or close(). */
  protected passEnded(_finished: boolean): void {}
  /** Lines the summary adds under the stage table. */
  protected summaryExtra(): string {
    return '';
  }

  /** The resources once opened (undefined before the first `for await` has opened them). */
  protected get opened(): R | undefined {
    return this.#openedNow;
  }

  protected get running(): boolean {
    return this.#running;
  }

  /** Throws 'busy' for a call that must come between passes. */
  protected betweenPasses(call: string): void {
    if (this.#running) throw new LoaderError('busy', `${this.loaderName}.${call}: called during a pass; call it between passes`);
  }

  protected open(): Promise<R> {
    this.#opened ??= this.openResources().then((r) => {
      this.#openedNow = r;
      return r;
    });
    return this.#opened;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<B, void, undefined> {
    if (this.#closed) throw new LoaderError('closed', `${this.loaderName}: iterated after close()`);
    if (this.#running) throw new LoaderError('busy', `${this.loaderName}: already being iterated (one \`for await\` at a time)`);
    this.#running = true;
    let finished = false;
    try {
      const opened = await this.open();
      // Closed while opening (its signal aborted): the resources are closed, so build no pipeline over them.
      if (this.#closed) return;
      const pipeline = this.buildPass(opened);
      this.#pipeline = pipeline;
      for (const listener of this.#statsListeners) listener.stop = pipeline.onStats(listener.callback, listener.intervalMs);
      for await (const batch of pipeline) {
        this.batchTaken(batch);
        yield batch as unknown as B;
      }
      // A pipeline that close() or the signal stopped ends too, with its items not all delivered:
      // that pass is not finished (a state() taken now resumes at what was not delivered).
      finished = !this.#closed;
    } finally {
      await this.#endPass(finished);
    }
  }

  async #endPass(finished: boolean): Promise<void> {
    for (const listener of this.#statsListeners) listener.stop();
    const pipeline = this.#pipeline;
    if (pipeline) {
      await pipeline.stop();
      this.#failures.push(...pipeline.failures());
      this.#failureCount += pipeline.failureCount();
    }
    try {
      if (this.#openedNow !== undefined) this.passEnded(finished);
    } finally {
      this.#running = false;
    }
  }

  /** The pipeline's statistics for the current (or last) pass: per stage, time working, starved, blocked and waiting. */
  stats(): PipelineStats | undefined {
    return this.#pipeline?.stats();
  }

  /** The stage that holds the loader back, by working time (see docs/pipeline.md), or undefined. */
  bottleneck(): Bottleneck | undefined {
    const stats = this.stats();
    return stats && bottleneck(stats);
  }

  /** The stats as one text table with the bottleneck named. */
  summary(): string {
    const stats = this.stats();
    if (!stats) return `${this.loaderName}: not started`;
    const extra = this.summaryExtra();
    return extra ? `${formatStats(stats)}\n${extra}` : formatStats(stats);
  }

  /** Every item not delivered so far, with its key, stage and typed error. */
  failures(): readonly FailureRecord[] {
    return this.#pipeline && this.#running ? [...this.#failures, ...this.#pipeline.failures()] : this.#failures;
  }

  /** Every failure counted, also past the ones failures() keeps. */
  failureCount(): number {
    return this.#failureCount + (this.#pipeline && this.#running ? this.#pipeline.failureCount() : 0);
  }

  /**
   * Calls `callback` with the statistics every `intervalMs` while a pass runs (a live view);
   * returns the function that stops it.
   */
  onStats(callback: (stats: PipelineStats) => void, intervalMs = 1000): () => void {
    const listener: StatsListener = { callback, intervalMs, stop: () => {} };
    this.#statsListeners.add(listener);
    if (this.#running && this.#pipeline) listener.stop = this.#pipeline.onStats(callback, intervalMs);
    return () => {
      listener.stop();
      this.#statsListeners.delete(listener);
    };
  }

  /**
   * Awaits `wait` (a GPU fence, say) as the consumer's wait for `resource`: the statistics count
   * it as waiting, not working, so a loop held up by the GPU is not taken for the bottleneck.
   */
  async waitFor<T>(wait: Promise<T>, resource = 'GPU'): Promise<T> {
    const pipeline = this.#pipeline;
    return pipeline && this.#running ? pipeline.consumer.waitFor(wait, resource) : wait;
  }

  /** Whether the first `for await` has opened the loader's resources (its order, its state()). */
  get started(): boolean {
    return this.#openedNow !== undefined;
  }

  /** Whether close() has been called (or the signal aborted). */
  get closed(): boolean {
    return this.#closed;
  }

  /** Stops the pass in progress and frees threads, workers and buffers. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    await this.#pipeline?.stop();
    const opened = await this.#opened?.catch(() => undefined);
    if (opened !== undefined) await this.closeOpened(opened);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
