// loader(): one object from files to batches where the user wants them. Inside it is the pipeline
// an expert would wire by hand (docs/pipeline.md), with every cross-link made from the pieces
// themselves:
//
//   source items (seeded order, this rank's share)
//     → read        event loop, async I/O, `readConcurrency` at once
//     → decode      ImageBatcher: wasm threads decode straight into batch buffers (concurrency: the pool's job slots)
//     → to-gpu      upload ring → WGSL normalise → ring of float buffers      (to: a GPU device)
//       to-tfjs     TfjsFeeder → tf.js tensors                                (to: tf)
//     → the consumer's `for await`
//
// A `for await` runs `epochs` epochs and ends; the next one continues where it stopped (the next
// epoch after a full pass, the consumer's position after a `break`), or from setEpoch(n).
import { DecodePool, ImageBatcher, type ImageBatch } from '../decode/index.ts';
import { OptionError, TandemError } from '../errors/index.ts';
import { acquireGpu, BatchUploader, type GpuBatch, type GpuContext } from '../gpu/index.ts';
import {
  bottleneck,
  formatStats,
  PipelineBuilder,
  type Bottleneck,
  type FailureRecord,
  type Pipeline,
  type PipelineStats,
} from '../pipeline/index.ts';
import { NormalizedRing, type DeviceBatch } from './gpu-ring.ts';
import { checkLoaderOptions, type LoaderOptions, type LoaderSettings, type TfNamespaceLike } from './options.ts';
import { SourcePosition } from './position.ts';
import { resolveSource, type LoaderSource } from './sources.ts';
import { listOrder, startOf, streamOrder, type LoaderState, type PassItem, type PassOrder } from './state.ts';
import { openTfjsTarget, type TensorBatch } from './tfjs-target.ts';
import { shardOrder } from './shards.ts';

export type LoaderErrorCode = 'busy' | 'closed';

/**
 * What the batches are, once the loader has started: u8 NHWC in wasm memory ('cpu'), normalised
 * floats in GPU buffers ('gpu'), u8 as uploaded ('gpu-u8'), or tf.js tensors made on tf.js's WebGPU
 * device without a CPU pass ('tfjs-webgpu') or on the CPU for other backends ('tfjs-cpu').
 */
export type LoaderOutput = 'cpu' | 'gpu' | 'gpu-u8' | 'tfjs-webgpu' | 'tfjs-cpu';

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

/** What a `for await` over the loader gives, by where `to` sends batches. */
export type LoaderBatch<O extends LoaderOptions | undefined> = O extends { to: GPUDevice | GpuContext }
  ? O extends { normalize: false }
    ? GpuBatch
    : DeviceBatch
  : O extends { to: TfNamespaceLike }
    ? TensorBatch
    : ImageBatch;

/** Anything the pipeline's last stage hands out: every kind has its keys and a release(). */
interface Releasable {
  readonly keys: readonly string[];
  release(): void;
}

interface Opened {
  pool: DecodePool;
  ownPool: boolean;
  batcher: ImageBatcher;
  order: PassOrder;
  classes: readonly string[];
  /** The stage after decode, or undefined for CPU batches. */
  convert: ((batch: ImageBatch, ctx: Parameters<NormalizedRing['convert']>[1]) => Promise<Releasable>) | undefined;
  targetName: string;
  output: LoaderOutput;
  /** GPU buffers lent to batches not yet released. */
  heldOnGpu: () => number;
  closeTarget: () => Promise<void>;
}

/**
 * Batches of images from `source`, decoded, transformed and sent where `options.to` says: CPU
 * bytes (default), normalised float buffers on a GPU device, or TensorFlow.js tensors. Options are
 * checked now (an OptionError names a bad one); threads and GPU buffers are made on the first
 * `for await`. Close it (`await using`, or close() in `finally`) to stop its threads.
 */
export function loader<const O extends LoaderOptions | undefined = undefined>(source: LoaderSource, options?: O): Loader<LoaderBatch<O>> {
  return new Loader<LoaderBatch<O>>(source, checkLoaderOptions(options));
}

export class Loader<B> implements AsyncIterable<B>, AsyncDisposable {
  readonly #source: LoaderSource;
  readonly #o: LoaderSettings;
  #opened: Promise<Opened> | undefined;
  #pipeline: Pipeline<Releasable> | undefined;
  #running = false;
  #closed = false;
  /** Where the next pass starts, and where the current one stands. */
  #epoch = 0;
  #offset = 0;
  #startStep = 0;
  /** The epoch the pass in progress (or interrupted) ends before; undefined between passes. */
  #passEnd: number | undefined;
  /** Whether `resumeFrom` has been applied (once, at the first pass). */
  #resumed = false;
  #position = new SourcePosition();
  #perEpoch: number | undefined;
  readonly #failures: FailureRecord[] = [];
  #failureCount = 0;
  #onAbort: (() => void) | undefined;

  constructor(source: LoaderSource, settings: LoaderSettings) {
    this.#source = source;
    this.#o = settings;
    const signal = settings.signal;
    if (signal) {
      this.#onAbort = () => void this.close();
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  /** What the batches are (see LoaderOutput); undefined until the loader has started. */
  get output(): LoaderOutput | undefined {
    return this.#output;
  }

  #output: LoaderOutput | undefined;

  /** Batch size, output height and width, channels: the shape every batch has (the last may have fewer rows). */
  get shape(): { batchSize: number; height: number; width: number; channels: number } {
    const { batchSize, height, width, channels } = this.#o;
    return { batchSize, height, width, channels };
  }

  /** Class names by label where the source names them (folders); known after the first batch (or `await loader.classes()`). */
  async classes(): Promise<readonly string[]> {
    return (await this.#open()).classes;
  }

  /** Batches of one pass: `epochs` epochs from where the last pass stopped (or setEpoch). */
  async *[Symbol.asyncIterator](): AsyncGenerator<B, void, undefined> {
    if (this.#closed) throw new LoaderError('closed', 'loader: iterated after close()');
    if (this.#running) throw new LoaderError('busy', 'loader: already being iterated (one `for await` at a time)');
    this.#running = true;
    let finished = false;
    try {
      const r = await this.#open();
      // Closed while opening (its signal aborted): the pool is closed, so build no pipeline over it.
      if (this.#closed) return;
      const resumeFrom = this.#o.resumeFrom;
      if (resumeFrom && !this.#resumed) this.#resume(resumeFrom, r.order);
      this.#resumed = true;
      const perEpoch = r.order.perEpoch;
      this.#startStep = perEpoch === undefined ? this.#offset : this.#epoch * perEpoch + this.#offset;
      this.#position = new SourcePosition();
      if (this.#passEnd === undefined || this.#epoch >= this.#passEnd) this.#passEnd = this.#epoch + this.#o.epochs;
      const pipeline = this.#build(r, this.#passEnd);
      this.#pipeline = pipeline;
      for await (const batch of pipeline) {
        // Counted as the consumer takes it: a state() taken while it is in hand includes it.
        this.#position.consumed(batch.keys);
        yield batch as B;
      }
      finished = true;
    } finally {
      await this.#endPass(finished);
    }
  }

  /** Starts the next pass at the beginning of `epoch` (PyTorch's `set_epoch`): new shuffle, new crops. */
  setEpoch(epoch: number): void {
    if (!Number.isInteger(epoch) || epoch < 0) throw new OptionError('loader.setEpoch', 'epoch', epoch, 'a whole number');
    if (this.#running) throw new LoaderError('busy', 'loader.setEpoch: called during a pass; call it between passes');
    this.#epoch = epoch;
    this.#offset = 0;
    this.#position = new SourcePosition();
    this.#startStep = this.#perEpoch === undefined ? 0 : epoch * this.#perEpoch;
    this.#passEnd = undefined;
    this.#resumed = true; // an explicit epoch wins over resumeFrom
  }

  /** Where the consumer stands, as JSON: pass it as `resumeFrom` to continue exactly there. */
  state(): LoaderState {
    const order = this.#orderNow();
    return order.state(this.#stepNow(), this.#passEnd);
  }

  /** The epoch the next batch belongs to (its first row's). */
  get epoch(): number {
    const step = this.#stepNow();
    return this.#perEpoch ? Math.floor(step / this.#perEpoch) : this.#epoch;
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
    return stats ? formatStats(stats) : 'loader: not started';
  }

  /** Every item not delivered so far, with its key, stage and typed error. */
  failures(): readonly FailureRecord[] {
    return this.#pipeline && this.#running ? [...this.#failures, ...this.#pipeline.failures()] : this.#failures;
  }

  failureCount(): number {
    return this.#failureCount + (this.#pipeline && this.#running ? this.#pipeline.failureCount() : 0);
  }

  /**
   * Calls `callback` with the statistics every `intervalMs` while a pass runs (a live view);
   * returns the function that stops it.
   */
  onStats(callback: (stats: PipelineStats) => void, intervalMs = 1000): () => void {
    const listener = { callback, intervalMs, stop: () => {} };
    this.#statsListeners.add(listener);
    if (this.#running && this.#pipeline) listener.stop = this.#pipeline.onStats(callback, intervalMs);
    return () => {
      listener.stop();
      this.#statsListeners.delete(listener);
    };
  }

  readonly #statsListeners = new Set<{ callback: (stats: PipelineStats) => void; intervalMs: number; stop: () => void }>();

  /**
   * Awaits `wait` (a GPU fence, say) as the consumer's wait for `resource`: the statistics count
   * it as waiting, not working, so a loop held up by the GPU is not taken for the bottleneck.
   */
  async waitFor<T>(wait: Promise<T>, resource = 'GPU'): Promise<T> {
    const pipeline = this.#pipeline;
    return pipeline && this.#running ? pipeline.consumer.waitFor(wait, resource) : wait;
  }

  /** Batch buffers and GPU buffers not back in their rings (all 0 once every batch is released). */
  held(): { batchBuffers: number; gpuSlots: number } {
    const r = this.#openedNow;
    if (!r) return { batchBuffers: 0, gpuSlots: 0 };
    const buffers = r.batcher.stats();
    return { batchBuffers: buffers.buffers - buffers.free, gpuSlots: r.heldOnGpu() };
  }

  #openedNow: Opened | undefined;

  /** Stops the pass in progress and frees threads, batch buffers and GPU buffers. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#onAbort) this.#o.signal?.removeEventListener('abort', this.#onAbort);
    await this.#pipeline?.stop();
    const opened = this.#opened;
    if (!opened) return;
    const r = await opened.catch(() => undefined);
    if (!r) return;
    await r.closeTarget();
    r.batcher.close();
    if (r.ownPool) await r.pool.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #orderNow(): PassOrder {
    const order = this.#openedOrder;
    if (!order) throw new LoaderError('busy', 'loader.state: the loader has not started yet (take a batch first)');
    return order;
  }

  #openedOrder: PassOrder | undefined;

  #stepNow(): number {
    return this.#startStep + this.#position.position;
  }

  #resume(state: LoaderState, order: PassOrder): void {
    const { epoch, offset, until } = startOf(state, order);
    this.#epoch = epoch;
    this.#offset = offset;
    this.#passEnd = until;
  }

  #build(r: Opened, passEnd: number): Pipeline<Releasable> {
    const o = this.#o;
    const position = this.#position;
    const items = r.order.items(this.#epoch, this.#offset, passEnd - this.#epoch, (key) => position.yielded(key));
    const read = async (item: PassItem) => ({ bytes: await item.read(), label: item.label, key: item.key, epoch: item.epoch });
    const decoded = new PipelineBuilder()
      .addSource(items)
      .pipe(read, { name: 'read', concurrency: o.readConcurrency })
      .batch(r.batcher, { name: 'decode', concurrency: r.pool.maxInFlight, ordered: 'input' });
    const last = r.convert ? decoded.pipe(r.convert, { name: r.targetName, concurrency: 1 }) : (decoded as PipelineBuilder<Releasable>);
    const pipeline = last.addSink(2).build({ failureBudget: o.failureBudget, consumer: o.consumer });
    for (const listener of this.#statsListeners) listener.stop = pipeline.onStats(listener.callback, listener.intervalMs);
    return pipeline;
  }

  async #endPass(finished: boolean): Promise<void> {
    const pipeline = this.#pipeline;
    for (const listener of this.#statsListeners) listener.stop();
    if (pipeline) {
      await pipeline.stop();
      this.#failures.push(...pipeline.failures());
      this.#failureCount += pipeline.failureCount();
    }
    const order = this.#openedOrder;
    if (order) {
      const perEpoch = order.perEpoch;
      // A pass that ran to its end is done with every item, also failed ones after the last batch.
      let step = this.#stepNow();
      if (finished && perEpoch !== undefined) step = (this.#passEnd ?? this.#epoch + this.#o.epochs) * perEpoch;
      if (finished) this.#passEnd = undefined;
      this.#startStep = step;
      this.#position = new SourcePosition();
      if (perEpoch !== undefined && perEpoch > 0) {
        this.#epoch = Math.floor(step / perEpoch);
        this.#offset = step - this.#epoch * perEpoch;
      } else {
        this.#offset = step;
      }
    }
    this.#running = false;
  }

  #open(): Promise<Opened> {
    this.#opened ??= this.#openResources();
    return this.#opened;
  }

  async #openResources(): Promise<Opened> {
    const o = this.#o;
    const ownPool = o.pool === undefined;
    // The pool starts (threads, module compile) while the source is listed.
    const starting = o.pool ? Promise.resolve(o.pool) : DecodePool.create({ threads: o.threads });
    let resolved: Awaited<ReturnType<typeof resolveSource>>;
    try {
      resolved = await resolveSource(this.#source, o.fetch);
    } catch (error) {
      if (ownPool) await starting.then((p) => p.close()).catch(() => {});
      throw error;
    }
    const pool = await starting;
    if (!resolved.list && !resolved.shards) {
      // An iterable is read once, in its own order, as it is on every rank.
      const listOnly = (['shuffle', 'epochs', 'worldSize'] as const).find((k) => (k === 'shuffle' ? o.shuffle : (o[k] ?? 1) > 1));
      if (listOnly) {
        if (ownPool) await pool.close();
        throw new OptionError(
          'loader options',
          listOnly,
          o[listOnly],
          'left out for an iterable source (it is read once, in its own order): pass a list to shuffle, repeat or shard',
        );
      }
    }
    const order = resolved.shards
      ? shardOrder(resolved.shards, o)
      : resolved.list
        ? listOrder(resolved.list, o)
        : streamOrder(resolved.stream ?? []);
    this.#openedOrder = order;
    this.#perEpoch = order.perEpoch;
    let batcher: ImageBatcher | undefined;
    try {
      batcher = new ImageBatcher(pool, {
        batchSize: o.batchSize,
        height: o.height,
        width: o.width,
        channels: o.channels,
        buffers: 4,
        decode: { ...o.decode, ...(o.transform === 'random-crop' ? {} : { fit: o.transform }) },
        ...(o.transform === 'random-crop' ? { randomCrop: { seed: o.seed } } : {}),
      });
      const target = await this.#openTarget(batcher, resolved.classes);
      this.#output = target.output;
      this.#openedNow = { pool, ownPool, batcher, order, classes: resolved.classes, ...target };
      return this.#openedNow;
    } catch (error) {
      batcher?.close();
      if (ownPool) await pool.close();
      throw error;
    }
  }

  async #openTarget(
    batcher: ImageBatcher,
    classes: readonly string[],
  ): Promise<Pick<Opened, 'convert' | 'targetName' | 'output' | 'closeTarget' | 'heldOnGpu'>> {
    const o = this.#o;
    const to = o.to;
    if (to === 'cpu') return { convert: undefined, targetName: 'decode', output: 'cpu', closeTarget: async () => {}, heldOnGpu: () => 0 };
    if ('tensor' in to) {
      const target = await openTfjsTarget(to, { ...o, classes: o.classes ?? classes.length });
      return {
        convert: target.convert,
        targetName: 'to-tfjs',
        output: `tfjs-${target.path}`,
        closeTarget: target.close,
        heldOnGpu: () => 0,
      };
    }
    // A device given as it is is adopted, never destroyed: the caller made it and keeps it.
    const gpu: GpuContext = 'queue' in to ? await acquireGpu({ device: to }) : to;
    if (!o.normalize) {
      const uploader = new BatchUploader(gpu.device, { maxBatchBytes: batcher.batchBytes, slots: 4 });
      return {
        convert: (batch, ctx) => uploader.upload(batch, ctx.signal, ctx),
        targetName: 'to-gpu',
        output: 'gpu-u8',
        closeTarget: () => uploader.close(),
        heldOnGpu: () => uploader.slotCount - uploader.freeSlots,
      };
    }
    const shape = { batchSize: o.batchSize, height: o.height, width: o.width, channels: o.channels };
    const normalize = { layout: o.layout ?? 'NCHW', ...(o.mean ? { mean: o.mean } : {}), ...(o.std ? { std: o.std } : {}) } as const;
    const ring = await NormalizedRing.create(gpu, shape, normalize, 4);
    return {
      convert: (batch, ctx) => ring.convert(batch, ctx),
      targetName: 'to-gpu',
      output: 'gpu',
      closeTarget: () => ring.close(),
      heldOnGpu: () => ring.held,
    };
  }
}
