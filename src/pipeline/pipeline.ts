/** A running pipeline: owns the queues, stage loops, executors, timers and the failure report. */
import { allowManyListeners } from '../runtime/index.ts';
import type { RunContext } from './context.ts';
import { PipelineStallError } from './errors.ts';
import type { Executor } from './executor.ts';
import { describeInput, type FailureRecord, FailureLog } from './failures.ts';
import type { PipeRunner } from './pipe.ts';
import { OrderedPipe } from './pipe-ordered.ts';
import { UnorderedPipe } from './pipe-unordered.ts';
import { BoundedQueue, CLOSED, EMPTY } from './queue.ts';
import { runAggregate, runDisaggregate } from './reshape.ts';
import { runIterableSource, runMergeSource } from './source.ts';
import { resourceWaits, StageCounters } from './counters.ts';
import { type PipelineStats, snapshotStage, timeSplit } from './stats.ts';
import type { BuildOptions, ConsumerContext, FailureBudget, MergeSourceConfig, PipelineConfig, StageConfig } from './types.ts';
import { createExecutor } from './worker-pool.ts';

export type PipelineState = 'idle' | 'running' | 'stopping' | 'stopped';

export interface MergeOptions {
  mode?: 'round-robin' | 'weighted';
  weights?: readonly number[];
  seed?: number;
}

type ConfigLike = PipelineConfig | { config(): PipelineConfig };

export class Pipeline<T> implements AsyncIterableIterator<T>, AsyncDisposable {
  /** A source that interleaves other pipelines (round-robin, or seeded weighted choice). */
  static merge(inputs: readonly ConfigLike[], opts: MergeOptions = {}): MergeSourceConfig {
    const mode = opts.mode ?? 'round-robin';
    if (mode === 'weighted' && opts.weights?.length !== inputs.length) {
      throw new RangeError('weighted merge needs one weight per input');
    }
    const configs = inputs.map((c) => ('config' in c && typeof c.config === 'function' ? c.config() : (c as PipelineConfig)));
    return { kind: 'merge', inputs: configs, mode, weights: opts.weights, seed: opts.seed ?? 0 };
  }

  readonly config: PipelineConfig;
  readonly #opts: BuildOptions;
  #state: PipelineState = 'idle';
  readonly #abort = new AbortController();
  #fatal: { error: unknown } | undefined;
  readonly #counters: StageCounters[];
  /**
   * The consumer as a one-slot stage: working from start() on except inside its own resource
   * waits; the time it waits inside next() is the sink queue's get wait, taken off in stats().
   */
  readonly #consumer: StageCounters;
  #consumerResource: string | undefined;
  /** Tell the pipeline about the consumer: its name, and its waits for things outside the pipeline. */
  readonly consumer: ConsumerContext;
  /** #queues[i] is the input of stage i + 1 (counter index); the last one is the sink. */
  readonly #queues: BoundedQueue<unknown>[];
  readonly #pipes: PipeRunner[] = [];
  readonly #executors: Executor[] = [];
  readonly #children: Pipeline<unknown>[] = [];
  readonly #failures: FailureLog;
  readonly #timers = new Set<ReturnType<typeof setInterval>>();
  readonly #ctx: RunContext;
  #finished: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;
  #delivered = 0;
  #t0 = 0;
  #t1: number | undefined;
  #onAbort: (() => void) | undefined;

  constructor(config: PipelineConfig, opts: BuildOptions = {}) {
    this.config = config;
    this.#opts = opts;
    allowManyListeners(this.#abort.signal);
    this.#failures = new FailureLog(opts.describeInput ?? describeInput, opts.failureBudget, opts.keepFailures, opts.onFailure);
    const stageConc = (s: StageConfig) => (s.kind === 'pipe' ? s.concurrency : 1);
    this.#counters = [
      new StageCounters('source', 'source', 1),
      ...config.stages.map((s) => new StageCounters(s.name, s.kind, stageConc(s))),
    ];
    this.#queues = [...config.stages.map((s) => new BoundedQueue<unknown>(s.queueSize)), new BoundedQueue(config.sinkSize)];
    this.#consumer = new StageCounters(opts.consumer ?? 'consumer', 'consumer', 1);
    const waits = resourceWaits(this.#consumer);
    const self = this;
    let name = opts.consumer ?? 'consumer';
    this.consumer = {
      get name() {
        return name;
      },
      set name(n: string) {
        name = n;
      },
      waitFor<T>(wait: PromiseLike<T>, resource?: string): Promise<T> {
        self.#consumerResource = resource ?? self.#consumerResource ?? 'resource';
        return waits.waitFor(wait);
      },
      beginWait(resource?: string): void {
        self.#consumerResource = resource ?? self.#consumerResource ?? 'resource';
        waits.beginWait();
      },
      endWait: waits.endWait,
    };
    this.#ctx = {
      signal: this.#abort.signal,
      get stopped() {
        return self.#state === 'stopping' || self.#state === 'stopped';
      },
      fail: (stage, budget, input, error) => {
        const err = this.#failures.add(stage, budget, input, error, this.#counters, this.#sourceItems());
        if (err !== undefined) this.#fail(err);
      },
      checkBudget: (stage, budget) => {
        const err = this.#failures.check(stage, budget, this.#counters, this.#sourceItems());
        if (err !== undefined) this.#fail(err);
      },
      fatal: (error) => this.#fail(error),
    };
  }

  /** The stage graph as JSON-able data: functions become their names, iterables a short tag. */
  describe(): unknown {
    return JSON.parse(
      JSON.stringify(this.config, (key, value: unknown) => {
        if (typeof value === 'function') return `[function ${value.name || 'anonymous'}]`;
        if (key === 'iterable') return Array.isArray(value) ? `[array of ${value.length}]` : '[iterable]';
        return value;
      }),
    );
  }

  get state(): PipelineState {
    return this.#state;
  }

  /** True from start() until every stage loop, task, executor and timer has finished. */
  get running(): boolean {
    return this.#state === 'running' || this.#state === 'stopping';
  }

  start(): void {
    if (this.#state !== 'idle') return;
    const signal = this.#opts.signal;
    if (signal?.aborted === true) {
      this.#fatal = { error: signal.reason };
      void this.stop();
      return;
    }
    this.#state = 'running';
    this.#t0 = performance.now();
    this.#consumer.begin(this.#t0);
    if (signal !== undefined) {
      this.#onAbort = () => this.#fail(signal.reason);
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
    const loops: Promise<void>[] = [this.#guard(this.#runSource(), 0)];
    this.config.stages.forEach((stage, i) => {
      loops.push(this.#guard(this.#runStage(stage, i), i + 1));
    });
    this.#finished = Promise.all(loops).then(() => this.#shutdown());
  }

  /** Stops everything and resolves once nothing of this pipeline is running any more. */
  stop(): Promise<void> {
    if (this.#state === 'idle') {
      this.#state = 'stopped';
      for (const q of this.#queues) q.cancel();
      return Promise.resolve();
    }
    if (this.#state === 'running') {
      this.#state = 'stopping';
      this.#abort.abort(new DOMException('pipeline stopped', 'AbortError'));
      for (const q of this.#queues) q.cancel();
      for (const p of this.#pipes) p.wake();
    }
    this.#stopped ??= (this.#finished ?? Promise.resolve()).then(() => undefined);
    return this.#stopped;
  }

  async next(): Promise<IteratorResult<T>> {
    if (this.#state === 'idle') this.start();
    const sink = this.#queues[this.#queues.length - 1]!;
    let v = sink.tryGet();
    if (v === EMPTY) v = await this.#waitItem(sink);
    if (v === CLOSED) {
      await (this.#finished ?? Promise.resolve());
      if (this.#fatal !== undefined) throw this.#fatal.error;
      return { done: true, value: undefined };
    }
    this.#delivered++;
    return { done: false, value: v as T };
  }

  async return(): Promise<IteratorResult<T>> {
    await this.stop();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  /** The same as stop(): every Tandem resource ends with close(). */
  close(): Promise<void> {
    return this.stop();
  }

  /** Every failed item so far (this pipeline and the pipelines merged into it). */
  failures(): readonly FailureRecord[] {
    // The first `keepFailures` of each pipeline; failureCount() counts them all.
    return [...this.#children.flatMap((c) => c.failures()), ...this.#failures.records];
  }
  /** Every failed item so far, counted (this pipeline and the pipelines merged into it). */
  failureCount(): number {
    return this.#children.reduce((n, c) => n + c.failureCount(), this.#failures.total);
  }

  stats(): PipelineStats {
    const now = this.#t1 ?? performance.now();
    const elapsedMs = this.#t0 === 0 ? 0 : now - this.#t0;
    return {
      elapsedMs,
      running: this.running,
      delivered: this.#delivered,
      stages: this.#counters.map((c, i) => snapshotStage(c, i === 0 ? undefined : this.#queues[i - 1], elapsedMs, now)),
      consumer: this.#consumerStats(elapsedMs, now),
      merged: this.#children.map((c) => c.stats()),
    };
  }

  #consumerStats(elapsedMs: number, now: number): PipelineStats['consumer'] {
    const c = this.#consumer;
    const sink = this.#queues[this.#queues.length - 1]!;
    // Time inside next() waiting for an item (the wait in progress included) was counted as
    // working by the consumer's counters; move it to starved.
    const since = sink.getWaitingSince;
    const inNext = sink.getWaitMs + (since > 0 && now > since ? now - since : 0);
    return { name: this.consumer.name, resource: this.#consumerResource, ...timeSplit(c, elapsedMs, now, inNext) };
  }

  /** Calls `cb` every `intervalMs` until the pipeline stops or the returned function is called. */
  onStats(cb: (stats: PipelineStats) => void, intervalMs = 1000): () => void {
    if (this.#state === 'stopped') return () => {};
    const timer = setInterval(() => cb(this.stats()), intervalMs);
    this.#timers.add(timer);
    return () => {
      clearInterval(timer);
      this.#timers.delete(timer);
    };
  }

  #sourceItems(): number {
    return this.#counters[0]?.out ?? 0;
  }

  #fail(error: unknown): void {
    this.#fatal ??= { error };
    void this.stop();
  }

  async #guard(loop: Promise<void>, index: number): Promise<void> {
    try {
      await loop;
    } catch (e) {
      this.#fail(e);
    } finally {
      this.#queues[index]?.close();
    }
  }

  async #runSource(): Promise<void> {
    const src = this.config.source;
    const s = this.#counters[0]!;
    const out = this.#queues[0]!;
    if (src.kind === 'iterable') return runIterableSource(src, out, this.#ctx, s, this.#opts.failureBudget);
    for (const cfg of src.inputs) {
      // Children report failures through failures(); their own budgets stop them.
      const child = new Pipeline<unknown>(cfg, { describeInput: this.#opts.describeInput });
      this.#children.push(child);
    }
    return runMergeSource(src, this.#children, out, this.#ctx, s);
  }

  async #runStage(stage: StageConfig, i: number): Promise<void> {
    const input = this.#queues[i]!;
    const output = this.#queues[i + 1]!;
    const s = this.#counters[i + 1]!;
    if (stage.kind === 'aggregate') return runAggregate(stage, input, output, this.#ctx, s);
    if (stage.kind === 'disaggregate') return runDisaggregate(input, output, this.#ctx, s);
    const exec = createExecutor(stage);
    if (exec !== undefined) this.#executors.push(exec);
    // Input order with one task in flight is completion order: no ring is needed.
    const Runner = stage.ordered === 'input' && stage.concurrency > 1 ? OrderedPipe : UnorderedPipe;
    const runner = new Runner(stage, input, output, this.#ctx, s, exec);
    this.#pipes.push(runner);
    return runner.loop();
  }

  #waitItem(sink: BoundedQueue<unknown>): Promise<unknown> {
    const ms = this.#opts.stallTimeoutMs;
    if (ms === undefined || this.#state !== 'running') return sink.get();
    const timer = setTimeout(() => this.#fail(this.#stallError(ms)), ms);
    return sink.get().finally(() => clearTimeout(timer));
  }

  #stallError(ms: number): PipelineStallError {
    const info = this.#counters.slice(1).map((c, i) => ({
      stage: c.name,
      inflight: c.inflight,
      inputQueued: this.#queues[i]?.size ?? 0,
    }));
    return new PipelineStallError(ms, info);
  }

  /** Runs once every stage loop has returned: closes executors and timers, then reports stopped. */
  async #shutdown(): Promise<void> {
    if (this.#state === 'running') this.#state = 'stopping';
    for (const t of this.#timers) clearInterval(t);
    this.#timers.clear();
    if (this.#onAbort !== undefined) this.#opts.signal?.removeEventListener('abort', this.#onAbort);
    await Promise.allSettled([...this.#executors.map((e) => e.close()), ...this.#children.map((c) => c.stop())]);
    this.#t1 = performance.now();
    for (const c of [...this.#counters, this.#consumer]) c.freeze(this.#t1);
    this.#state = 'stopped';
  }
}

export type { FailureBudget };
