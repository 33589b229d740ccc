/** Fluent builder → plain PipelineConfig → Pipeline. */
import { OptionChecker, OptionError } from '../errors/index.ts';
import { PipelineBuildError } from './errors.ts';
import { Pipeline } from './pipeline.ts';
import type {
  Aggregator,
  BuildOptions,
  CustomTask,
  ExecutorFactory,
  FailureBudget,
  Filtered,
  MergeSourceConfig,
  Ordering,
  PipelineConfig,
  SourceConfig,
  SourceInput,
  StageConfig,
  StageContext,
  StageFn,
  StagedAggregator,
  WorkerTask,
} from './types.ts';

export interface PipeOptions {
  name?: string;
  concurrency?: number;
  /** 'input' (default) keeps input order; 'completion' emits as tasks finish. */
  ordered?: Ordering;
  /** Per-stage failure budget; default: unlimited (every failure is still reported). */
  failures?: FailureBudget;
  /** Capacity of the queue feeding this stage; default max(8, 2 × concurrency). */
  queueSize?: number;
}

export interface SourceOptions {
  /** Number of epochs, or true for endless. Default 1. */
  repeat?: number | true;
  /** Emit an EpochEnd item (see isEpochEnd) after each epoch. */
  epochMarker?: boolean;
}

/**
 * Runs `exportName` of the ES module at `module` on a pool of workers; `init` is cloned once into
 * each worker and given to the module's `init` export (if any) before its first task.
 */
export function workerTask(
  module: string | URL,
  exportName: string,
  opts: Pick<WorkerTask, 'workers' | 'transfer' | 'init' | 'entry'> = {},
): WorkerTask {
  return { kind: 'worker', module: String(module), export: exportName, ...opts };
}

/** Plugs any Executor (e.g. a wasm thread pool) in as a stage. */
export function customTask(name: string, create: ExecutorFactory): CustomTask {
  return { kind: 'executor', name, create };
}

type GenFn<I, O> = (x: I, ctx: StageContext) => Iterator<O, unknown, undefined> | AsyncIterator<O, unknown, undefined>;
type PlainFn<I, O> = (x: I, ctx: StageContext) => O | Filtered | PromiseLike<O | Filtered>;
type Elem<T> = T extends Iterable<infer E> ? E : never;

export class PipelineBuilder<T = never> {
  #source: SourceConfig | undefined;
  readonly #stages: StageConfig[] = [];
  #sinkSize = 8;

  addSource<U>(src: SourceInput<U> | MergeSourceConfig, opts: SourceOptions = {}): PipelineBuilder<U> {
    if (this.#source !== undefined) throw new PipelineBuildError('source-already-set', 'addSource: the pipeline already has a source');
    const repeat = opts.repeat ?? 1;
    if (repeat !== true && (!Number.isInteger(repeat) || repeat < 1)) throw new RangeError('repeat must be ≥ 1 or true');
    if (isMerge(src)) {
      this.#source = src;
    } else {
      if (repeat !== 1 && typeof src !== 'function' && isOneShot(src)) {
        throw new TypeError('a one-shot iterator cannot be repeated; pass an array or a function returning an iterable');
      }
      this.#source = { kind: 'iterable', iterable: src, repeat, epochMarker: opts.epochMarker ?? false };
    }
    return this as unknown as PipelineBuilder<U>;
  }

  pipe<U>(fn: GenFn<T, U>, opts?: PipeOptions): PipelineBuilder<U>;
  pipe<U>(fn: PlainFn<T, U>, opts?: PipeOptions): PipelineBuilder<U>;
  /** Worker and custom tasks: the output type cannot be inferred, so name it: `.pipe<Out>(task)`. */
  pipe<U>(task: WorkerTask | CustomTask, opts?: PipeOptions): PipelineBuilder<U>;
  pipe<U>(task: GenFn<T, U> | PlainFn<T, U> | WorkerTask | CustomTask, opts: PipeOptions = {}): PipelineBuilder<U> {
    const o = new OptionChecker('pipe options', opts, ['name', 'concurrency', 'ordered', 'failures', 'queueSize', 'batchName']);
    const concurrency = o.integer('concurrency', 1, 1, 4096);
    if (opts.ordered !== undefined) o.oneOf('ordered', 'input', ['input', 'completion']);
    o.optionalInteger('queueSize', 1);
    const name = opts.name ?? this.#defaultName(typeof task === 'function' ? task.name : taskName(task));
    this.#stages.push({
      kind: 'pipe',
      name,
      task: task as StageFn<unknown, unknown> | WorkerTask | CustomTask,
      concurrency,
      ordered: opts.ordered ?? 'input',
      budget: opts.failures,
      queueSize: opts.queueSize ?? Math.max(8, 2 * concurrency),
    });
    return this as unknown as PipelineBuilder<U>;
  }

  /**
   * A stage and the aggregator that alone understands its outputs, in one step:
   * `.batch(batcher, { name: 'decode', concurrency: pool.maxInFlight })` is the decode stage with
   * those options, followed by the batcher's aggregator (named `batchName`, default 'batch').
   */
  batch<Token, U>(batcher: StagedAggregator<T, Token, U>, opts: PipeOptions & { batchName?: string } = {}): PipelineBuilder<U> {
    const { batchName, ...pipeOptions } = opts;
    return this.pipe<Token>(batcher.stage, pipeOptions).aggregate(() => batcher.aggregator(), { name: batchName ?? 'batch' });
  }

  aggregate(size: number, opts?: { dropLast?: boolean; name?: string }): PipelineBuilder<T[]>;
  aggregate<U>(create: () => Aggregator<T, U>, opts?: { name?: string }): PipelineBuilder<U>;
  aggregate<U>(sizeOrCreate: number | (() => Aggregator<T, U>), opts: { dropLast?: boolean; name?: string } = {}): PipelineBuilder<U> {
    const bySize = typeof sizeOrCreate === 'number';
    if (bySize && (!Number.isInteger(sizeOrCreate) || sizeOrCreate < 1)) throw new RangeError('aggregate size must be ≥ 1');
    this.#stages.push({
      kind: 'aggregate',
      name: opts.name ?? this.#defaultName('aggregate'),
      size: bySize ? sizeOrCreate : undefined,
      dropLast: opts.dropLast ?? false,
      create: bySize ? undefined : (sizeOrCreate as () => Aggregator<unknown, unknown>),
      queueSize: 8,
    });
    return this as unknown as PipelineBuilder<U>;
  }

  disaggregate(opts: { name?: string } = {}): PipelineBuilder<Elem<T>> {
    this.#stages.push({ kind: 'disaggregate', name: opts.name ?? this.#defaultName('disaggregate'), queueSize: 8 });
    return this as unknown as PipelineBuilder<Elem<T>>;
  }

  /** Capacity of the queue the consumer reads from (default 8). */
  addSink(bufferSize: number): this {
    if (!Number.isInteger(bufferSize) || bufferSize < 1)
      throw new OptionError('PipelineBuilder.addSink', 'bufferSize', bufferSize, 'a positive integer');
    this.#sinkSize = bufferSize;
    return this;
  }

  config(): PipelineConfig {
    if (this.#source === undefined) throw new PipelineBuildError('no-source', 'the pipeline has no source: call addSource first');
    return { source: this.#source, stages: [...this.#stages], sinkSize: this.#sinkSize };
  }

  build(opts: BuildOptions = {}): Pipeline<T> {
    return new Pipeline<T>(this.config(), opts);
  }

  #defaultName(base: string): string {
    const b = base || 'pipe';
    const taken = this.#stages.filter((s) => s.name === b || s.name.startsWith(`${b}#`)).length;
    return taken === 0 ? b : `${b}#${taken}`;
  }
}

function taskName(t: WorkerTask | CustomTask): string {
  return t.kind === 'worker' ? t.export : t.name;
}

function isMerge(x: unknown): x is MergeSourceConfig {
  return typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'merge' && 'inputs' in x;
}

function isOneShot(src: Iterable<unknown> | AsyncIterable<unknown>): boolean {
  const it = Symbol.asyncIterator in src ? src[Symbol.asyncIterator]() : src[Symbol.iterator]();
  return it === (src as unknown);
}
