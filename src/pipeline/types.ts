/** Plain data shared by the builder, the runtime and the public door. */
import type { Failed } from '../errors/index.ts';
import type { Executor } from './executor.ts';

/** Return this from a stage function to drop the item on purpose; it is counted as `filtered`. */
export const FILTERED: unique symbol = Symbol.for('tandem.pipeline.filtered');
export type Filtered = typeof FILTERED;

/** Emitted after the last item of each epoch when the source asks for `epochMarker: true`. */
export interface EpochEnd {
  readonly kind: 'tandem.epoch-end';
  readonly epoch: number;
}

export function epochEnd(epoch: number): EpochEnd {
  return Object.freeze({ kind: 'tandem.epoch-end', epoch });
}

export function isEpochEnd(x: unknown): x is EpochEnd {
  return typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'tandem.epoch-end';
}

/**
 * A failed item as a pipeline reports it: a `Failed` (key, stage, error, as sources report theirs,
 * so `isFailure` knows it) with the input described in one line. `key` is the input's own name
 * (its key, path, url, name or id field) when it has one, else that description.
 */
export interface FailureRecord extends Failed {
  /** A short description of the input (not the input itself, so no big buffers are retained). */
  readonly input: string;
}

export interface FailureBudget {
  /** Stop once more than this many items failed. */
  maxFailures?: number;
  /** Stop once failed / processed exceeds this rate (checked from `minItems` processed on). */
  maxFailureRate?: number;
  minItems?: number;
}

export interface StageContext {
  /** Aborted when the pipeline stops; long async work should honour it. */
  readonly signal: AbortSignal;
  readonly stage: string;
  /**
   * Brackets a wait for a pooled resource (a batch buffer, a GPU slot): the time until `wait`
   * settles counts as `resource`, not `working`, in the stage's statistics, and never makes the
   * stage the bottleneck. Resolves or rejects as `wait` does. Call it only from inside a task.
   */
  waitFor<T>(wait: PromiseLike<T>): Promise<T>;
  /** The same bracket without a promise: `beginWait()` … `endWait()`, exactly once each. */
  beginWait(): void;
  endWait(): void;
}

/** What the code iterating a pipeline may tell it (`pipeline.consumer`). */
export interface ConsumerContext {
  /** How statistics name the consumer (default 'consumer', or `build({ consumer })`). */
  name: string;
  /**
   * Brackets a wait of the consumer for something outside the pipeline (e.g. a GPU fence): that
   * time counts as the consumer waiting for `resource` (default 'resource'), and if it dominates
   * a consumer-bound pipeline, the bottleneck is named `resource` (e.g. 'GPU').
   */
  waitFor<T>(wait: PromiseLike<T>, resource?: string): Promise<T>;
  beginWait(resource?: string): void;
  endWait(): void;
}

export type StageFn<I, O> = (
  input: I,
  ctx: StageContext,
) => O | Filtered | PromiseLike<O | Filtered> | Iterator<O, unknown, undefined> | AsyncIterator<O, unknown, undefined>;

/** Runs a stage's work somewhere other than the event loop (worker pool, wasm thread pool). */
export type ExecutorFactory = (stage: string, concurrency: number) => Executor;

export interface WorkerTask {
  readonly kind: 'worker';
  /** Absolute URL of an ES module (file:, http(s):, blob:). */
  readonly module: string;
  readonly export: string;
  /** Pool size; defaults to the stage's concurrency. */
  readonly workers?: number;
  /** Move ArrayBuffers / typed arrays instead of copying them (default true). */
  readonly transfer?: boolean;
  /**
   * Setup data, structured-cloned once into each worker: the module's `init` export, if it has one,
   * is called with it before the worker takes tasks (a tokenizer built once, a table loaded once).
   */
  readonly init?: unknown;
  /**
   * A worker script of the task's own that imports the pipeline's bootstrap and registers the
   * task module with it (`registerTaskModule`), started instead of the bootstrap: `url` in Node,
   * `start` (written `new Worker(new URL(…, import.meta.url), { type: 'module' })`, the form
   * bundlers follow) in Deno and browsers. Then a bundled app bundles the task module with its
   * imports, which a module loaded by URL at run time cannot have.
   */
  readonly entry?: { readonly url: URL; readonly start?: () => Worker };
}

export interface CustomTask {
  readonly kind: 'executor';
  readonly name: string;
  readonly create: ExecutorFactory;
}

export type Ordering = 'input' | 'completion';

export type SourceInput<T> = Iterable<T> | AsyncIterable<T> | (() => Iterable<T> | AsyncIterable<T>);

export interface IterableSourceConfig {
  readonly kind: 'iterable';
  readonly iterable: SourceInput<unknown>;
  readonly repeat: number | true;
  readonly epochMarker: boolean;
}

export interface MergeSourceConfig {
  readonly kind: 'merge';
  readonly inputs: readonly PipelineConfig[];
  readonly mode: 'round-robin' | 'weighted';
  readonly weights: readonly number[] | undefined;
  readonly seed: number;
}

export type SourceConfig = IterableSourceConfig | MergeSourceConfig;

export interface PipeConfig {
  readonly kind: 'pipe';
  readonly name: string;
  readonly task: StageFn<unknown, unknown> | WorkerTask | CustomTask;
  readonly concurrency: number;
  readonly ordered: Ordering;
  readonly budget: FailureBudget | undefined;
  readonly queueSize: number;
}

/**
 * A stage whose outputs only its own aggregator understands, such as ImageBatcher: each task fills
 * one slot of a batch buffer, and only the aggregator knows when a batch is complete. The builder's
 * `batch()` adds the two together, so nothing can come between them.
 */
export interface StagedAggregator<I, Token, O> {
  readonly stage: (item: I, ctx: StageContext) => AsyncIterator<Token, unknown, undefined>;
  aggregator(): Aggregator<Token, O>;
}

export interface Aggregator<I, O> {
  /** Returns a finished group, or undefined while still collecting. */
  push(item: I): O | undefined;
  /** Called at epoch end and at the end of input; returns the partial group or undefined. */
  flush(): O | undefined;
  /** Number of items `flush` dropped (counted as filtered); optional. */
  dropped?(): number;
  /**
   * Called once when the pipeline stops before its input ended: the partial group will never be
   * emitted, so give back what it holds (ImageBatcher returns its part-filled buffers).
   */
  abandon?(): void;
}

export interface AggregateConfig {
  readonly kind: 'aggregate';
  readonly name: string;
  readonly size: number | undefined;
  readonly dropLast: boolean;
  readonly create: (() => Aggregator<unknown, unknown>) | undefined;
  readonly queueSize: number;
}

export interface DisaggregateConfig {
  readonly kind: 'disaggregate';
  readonly name: string;
  readonly queueSize: number;
}

export type StageConfig = PipeConfig | AggregateConfig | DisaggregateConfig;

export interface PipelineConfig {
  readonly source: SourceConfig;
  readonly stages: readonly StageConfig[];
  readonly sinkSize: number;
}

export interface BuildOptions {
  signal?: AbortSignal;
  /** Reject `next()` with PipelineStallError when no item arrives for this long. */
  stallTimeoutMs?: number;
  /** Budget over all stages: failures / source items. */
  failureBudget?: FailureBudget;
  /** Short text kept in failure records instead of the input itself (default: typed summary). */
  describeInput?: (input: unknown) => string;
  /** Called with every failure record as it happens (failures() keeps only the first ones). */
  onFailure?: (record: FailureRecord) => void;
  /** How many failure records failures() keeps (default 10,000); later ones are counted and passed to onFailure. */
  keepFailures?: number;
  /** How statistics name the code iterating the pipeline (default 'consumer'; e.g. 'training loop'). */
  consumer?: string;
}
