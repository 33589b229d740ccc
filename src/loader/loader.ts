// loader(): one object from files to batches where the user wants them. Inside it is the pipeline
// an expert would wire by hand (docs/pipeline.md), with every cross-link made from the pieces
// themselves:
//
//   source items (seeded order, this rank's share)
//     → read        event loop, async I/O, `readConcurrency` at once
//     → decode      ImageBatcher: wasm threads decode straight into batch buffers (concurrency: the pool's job slots)
//     → to-gpu      upload ring → WGSL normalise → ring of float buffers      (to: a GPU device)
//       to-tfjs     TfjsFeeder → tf.js tensors                                (to: tf)
//       to-jax      the GPU road on jax-js's device → jax-js arrays            (to: jax)
//     → the consumer's `for await`
//
// A `for await` runs `epochs` epochs and ends; the next one continues where it stopped (the next
// epoch after a full pass, the consumer's position after a `break`), or from setEpoch(n).
import { DecodePool, ImageBatcher, type ImageBatch } from '../decode/index.ts';
import { OptionError } from '../errors/index.ts';
import { acquireGpu, BatchUploader, type GpuBatch, type GpuContext } from '../gpu/index.ts';
import { PipelineBuilder, type Pipeline, type StageContext } from '../pipeline/index.ts';
import { openNormalizedRing, type DeviceBatch } from './gpu-ring.ts';
import { handOut, jaxGpu, jaxImagesStage, type JaxImageBatch } from './jax-target.ts';
import { checkLoaderOptions, isJax, type JaxNamespace, type LoaderOptions, type LoaderSettings, type TfNamespaceLike } from './options.ts';
import { CellPosition } from './cell-position.ts';
import { resolveSource, type LoaderSource } from './sources.ts';
import { listOrder, startOf, streamOrder, type LoaderState, type PassItem, type PassOrder } from './state.ts';
import { openTfjsTarget, type TensorBatch } from './tfjs-target.ts';
import { shardOrder } from './shards.ts';
import { LoaderError, LoaderShell, type Releasable } from './shell.ts';

export { LoaderError, type LoaderErrorCode } from './shell.ts';

/**
 * What the batches are, once the loader has started: u8 NHWC in wasm memory ('cpu'), normalised
 * floats in GPU buffers ('gpu'), u8 as uploaded ('gpu-u8'), or tf.js tensors made on tf.js's WebGPU
 * device without a CPU pass ('tfjs-webgpu') or on the CPU for other backends ('tfjs-cpu').
 */
export type LoaderOutput = 'cpu' | 'gpu' | 'gpu-u8' | 'tfjs-webgpu' | 'tfjs-cpu' | 'jax-webgpu';

/** What a `for await` over the loader gives, by where `to` sends batches. */
export type LoaderBatch<O extends LoaderOptions | undefined> = O extends { to: GPUDevice | GpuContext }
  ? O extends { normalize: false }
    ? GpuBatch
    : DeviceBatch
  : O extends { to: TfNamespaceLike }
    ? TensorBatch
    : O extends { to: JaxNamespace }
      ? JaxImageBatch
      : ImageBatch;

interface Opened {
  pool: DecodePool;
  ownPool: boolean;
  batcher: ImageBatcher;
  order: PassOrder;
  classes: readonly string[];
  /** The stage after decode, or undefined for CPU batches. */
  convert: ((batch: ImageBatch, ctx: StageContext) => Promise<Releasable>) | undefined;
  targetName: string;
  output: LoaderOutput;
  /** GPU buffers lent to batches not yet released. */
  heldOnGpu: () => number;
  closeTarget: () => Promise<void>;
  closeSource: () => Promise<void>;
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

export class Loader<B> extends LoaderShell<B, Opened, Releasable> {
  protected readonly loaderName = 'loader';
  readonly #source: LoaderSource;
  readonly #o: LoaderSettings;
  /** Where the next pass starts, and where the current one stands. */
  #epoch = 0;
  #offset = 0;
  #startStep = 0;
  /** The epoch the pass in progress (or interrupted) ends before; undefined between passes. */
  #passEnd: number | undefined;
  /** Whether `resumeFrom` has been applied (once, at the first pass). */
  #resumed = false;
  #position: CellPosition;
  #perEpoch: number | undefined;

  constructor(source: LoaderSource, settings: LoaderSettings) {
    super(settings.signal);
    this.#source = source;
    this.#o = settings;
    this.#position = new CellPosition(settings.batchSize);
  }

  /** What the batches are (see LoaderOutput); undefined until the loader has started. */
  get output(): LoaderOutput | undefined {
    return this.opened?.output;
  }

  /** Batch size, output height and width, channels: the shape every batch has (the last may have fewer rows). */
  get shape(): { batchSize: number; height: number; width: number; channels: number } {
    const { batchSize, height, width, channels } = this.#o;
    return { batchSize, height, width, channels };
  }

  /** Class names by label where the source names them (folders); known after the first batch (or `await loader.classes()`). */
  async classes(): Promise<readonly string[]> {
    return (await this.open()).classes;
  }

  /** Starts the next pass at the beginning of `epoch` (PyTorch's `set_epoch`): new shuffle, new crops. */
  setEpoch(epoch: number): void {
    if (!Number.isInteger(epoch) || epoch < 0) throw new OptionError('loader.setEpoch', 'epoch', epoch, 'a whole number');
    this.betweenPasses('setEpoch');
    this.#epoch = epoch;
    this.#offset = 0;
    this.#position = new CellPosition(this.#o.batchSize);
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

  /** Batch buffers and GPU buffers not back in their rings (all 0 once every batch is released). */
  held(): { batchBuffers: number; gpuSlots: number } {
    const r = this.opened;
    if (!r) return { batchBuffers: 0, gpuSlots: 0 };
    const buffers = r.batcher.stats();
    return { batchBuffers: buffers.buffers - buffers.free, gpuSlots: r.heldOnGpu() };
  }

  protected async closeOpened(r: Opened): Promise<void> {
    await r.closeTarget();
    r.batcher.close();
    await r.closeSource();
    if (r.ownPool) await r.pool.close();
  }

  protected override batchTaken(batch: Releasable): void {
    // Counted as the consumer takes it: a state() taken while it is in hand includes it.
    this.#position.consumed(batch.keys ?? []);
    handOut(batch);
  }

  protected buildPass(r: Opened): Pipeline<Releasable> {
    const resumeFrom = this.#o.resumeFrom;
    if (resumeFrom && !this.#resumed) this.#resume(resumeFrom, r.order);
    this.#resumed = true;
    const perEpoch = r.order.perEpoch;
    this.#startStep = perEpoch === undefined ? this.#offset : this.#epoch * perEpoch + this.#offset;
    this.#position = new CellPosition(this.#o.batchSize);
    if (this.#passEnd === undefined || this.#epoch >= this.#passEnd) this.#passEnd = this.#epoch + this.#o.epochs;
    return this.#build(r, this.#passEnd);
  }

  #orderNow(): PassOrder {
    const order = this.#openedOrder;
    if (!order) throw new LoaderError('busy', 'loader.state: the loader has not started yet (take a batch first)');
    return order;
  }

  #openedOrder: PassOrder | undefined;

  #stepNow(): number {
    return this.#startStep + this.#position.items;
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
    const items = r.order.items(this.#epoch, this.#offset, passEnd - this.#epoch, () => position.yielded());
    // The read stage starts its tasks in the source's order, so a count gives each item its number;
    // an item read is on its way to a batch slot (one that fails to read never takes one).
    let next = 0;
    const read = async (item: PassItem) => {
      const seq = next++;
      const bytes = await item.read();
      position.reached(seq, item.key);
      return { bytes, label: item.label, key: item.key, epoch: item.epoch };
    };
    const decoded = new PipelineBuilder()
      .addSource(items)
      .pipe(read, { name: 'read', concurrency: o.readConcurrency })
      .batch(r.batcher, { name: 'decode', concurrency: r.pool.maxInFlight, ordered: 'input' });
    const last = r.convert ? decoded.pipe(r.convert, { name: r.targetName, concurrency: 1 }) : (decoded as PipelineBuilder<Releasable>);
    return last.addSink(2).build({ failureBudget: o.failureBudget, consumer: o.consumer });
  }

  protected override passEnded(finished: boolean): void {
    const order = this.#openedOrder;
    if (order) {
      const perEpoch = order.perEpoch;
      // A pass that ran to its end is done with every item, also failed ones after the last batch.
      let step = this.#stepNow();
      if (finished && perEpoch !== undefined) step = (this.#passEnd ?? this.#epoch + this.#o.epochs) * perEpoch;
      if (finished) this.#passEnd = undefined;
      // A shard stream stopped part-way (break, close): the next pass starts a stream from its state there.
      const shards = !finished && order.resume ? order.state(step, undefined).shards : undefined;
      if (shards) {
        order.resume?.(shards);
        step = 0;
      }
      this.#startStep = step;
      this.#position = new CellPosition(this.#o.batchSize);
      if (perEpoch !== undefined && perEpoch > 0) {
        this.#epoch = Math.floor(step / perEpoch);
        this.#offset = step - this.#epoch * perEpoch;
      } else {
        this.#offset = step;
      }
    }
  }

  protected async openResources(): Promise<Opened> {
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
    // A Parquet source holds its files open (footers read, HTTP sources): closed with the loader.
    const closeSource = async () => {
      if (resolved.shards && 'dataset' in resolved.shards) await resolved.shards.close();
    };
    let batcher: ImageBatcher | undefined;
    try {
      if (!resolved.list && !resolved.shards) {
        // An iterable is read once, in its own order, as it is on every rank.
        const listOnly = (['shuffle', 'epochs', 'worldSize'] as const).find((k) => (k === 'shuffle' ? o.shuffle : (o[k] ?? 1) > 1));
        if (listOnly)
          throw new OptionError(
            'loader options',
            listOnly,
            o[listOnly],
            'left out for an iterable source (it is read once, in its own order): pass a list to shuffle, repeat or shard',
          );
      }
      const order = resolved.shards
        ? shardOrder(resolved.shards, o)
        : resolved.list
          ? listOrder(resolved.list, o)
          : streamOrder(resolved.stream ?? []);
      this.#openedOrder = order;
      this.#perEpoch = order.perEpoch;
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
      return { pool, ownPool, batcher, order, classes: resolved.classes, closeSource, ...target };
    } catch (error) {
      batcher?.close();
      await closeSource();
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
    const jax = isJax(to) ? to : undefined;
    // A device given as it is is adopted, never destroyed: the caller (or jax-js) made it and keeps it.
    const gpu: GpuContext = jax ? await jaxGpu(jax) : 'queue' in to ? await acquireGpu({ device: to }) : (to as GpuContext);
    if (!o.normalize) {
      if (jax) throw new OptionError('loader options', 'normalize', false, 'true with `to: jax` (jax-js takes the normalised floats)');
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
    const ring = await openNormalizedRing(gpu, shape, normalize, 4);
    if (jax)
      return {
        convert: jaxImagesStage(jax, ring.convert),
        targetName: 'to-jax',
        output: 'jax-webgpu',
        closeTarget: ring.close,
        heldOnGpu: ring.held,
      };
    return { convert: ring.convert, targetName: 'to-gpu', output: 'gpu', closeTarget: ring.close, heldOnGpu: ring.held };
  }
}
