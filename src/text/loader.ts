// textLoader(): one object from text or token shards to packed token batches, the text counterpart
// of loader():
//
//   documents  token shards, text shards, text files, documents in memory (seeded order per epoch,
//              this rank's share, a shuffle buffer for shards)
//     → read       event loop, async I/O
//     → tokenize   the tokenizer in worker threads (token shards: ids as stored)
//     → pack       the packer: rows of seqLen + 1 tokens, document ids, positions, shifted labels
//     → to-gpu     one write through the upload ring, copied into a ring of i32 buffer sets
//     → the consumer's `for await`: TokenBatch (CPU), TokenDeviceBatch (GPU) or int32 tensors
import { LoaderError } from '../loader/index.ts';
import { acquireGpu, type GpuContext } from '../gpu/index.ts';
import {
  bottleneck,
  formatStats,
  PipelineBuilder,
  type Bottleneck,
  type FailureRecord,
  type Pipeline,
  type PipelineStats,
} from '../pipeline/index.ts';
import { PackingAggregator, TokenBatchPool, type NumberedDocument, type PackedBatch, type PackingCounts } from './batches.ts';
import { TextError } from './errors.ts';
import { TokenRing, type PackedDeviceBatch } from './gpu-ring.ts';
import { checkTextLoaderOptions, isJax, isTfjs, type JaxNamespace, type TextLoaderOptions, type TextLoaderSettings } from './options.ts';
import { Packer, type PackerSnapshot } from './pack.ts';
import { resolveText, startOf, type RawDocument, type ResolvedText, type TextSource } from './sources.ts';
import { checkState, type TextLoaderState } from './state.ts';
import { tfjsTokens, type TokenTensors } from './tfjs-target.ts';
import { TokenizerPool } from './tokenizer.ts';
import type { TokenBatch, TokenDeviceBatch } from './types.ts';
import { numbered, toJax, withSpecials, type JaxTokenBatch, type Numbered } from './stages.ts';

/** What a `for await` gives, by `to`. */
export type TextLoaderBatch<O extends TextLoaderOptions> = O extends { to: GPUDevice | GpuContext }
  ? TokenDeviceBatch
  : O extends { to: JaxNamespace }
    ? JaxTokenBatch
    : O extends { to: object }
      ? TokenTensors
      : TokenBatch;

interface Opened {
  resolved: ResolvedText;
  tokenizer: TokenizerPool | undefined;
  ring: TokenRing | undefined;
  tf: TextLoaderSettings['to'] | undefined;
  jax: JaxNamespace | undefined;
  gpuOwned: GpuContext | undefined;
}

type Delivered = PackedBatch | PackedDeviceBatch | ((TokenTensors | JaxTokenBatch) & { snapshot: PackerSnapshot });

/** Where a pass starts: the order's position of its document 0, and the packer's snapshot relative to it. */
interface Start {
  docs: TextLoaderState['docs'] | undefined;
  packer: PackerSnapshot | undefined;
  carry?: TextLoaderState['carry'];
  after?: TextLoaderState['after'];
}

export class TextLoader<B = TokenBatch> implements AsyncIterable<B>, AsyncDisposable {
  readonly #source: TextSource;
  readonly #o: TextLoaderSettings;
  #opened: Promise<Opened> | undefined;
  #pipeline: Pipeline<Delivered> | undefined;
  #running = false;
  #closed = false;
  #start: Start;
  /** The packer's position after the last batch the consumer took, relative to `#start.docs`. */
  #taken: PackerSnapshot | undefined;
  #stepBase = 0;
  readonly #counts: PackingCounts = { batches: 0, rows: 0, positions: 0, padding: 0, documents: 0 };
  readonly #failures: FailureRecord[] = [];
  #failureCount = 0;
  #onAbort: (() => void) | undefined;

  constructor(source: TextSource, settings: TextLoaderSettings) {
    this.#source = source;
    this.#o = settings;
    const from = settings.resumeFrom;
    if (from) checkState(from, this.#packing());
    this.#start = { docs: from?.docs, packer: from?.packer, ...(from?.carry ? { carry: from.carry } : {}) };
    if (settings.signal) {
      this.#onAbort = () => void this.close();
      settings.signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  /** Rows per batch and positions per row: every batch's shape. */
  get shape(): readonly [number, number] {
    return [this.#o.batchSize, this.#o.seqLen];
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<B, void, undefined> {
    if (this.#closed) throw new LoaderError('closed', 'textLoader: iterated after close()');
    if (this.#running) throw new LoaderError('busy', 'textLoader: already being iterated (one `for await` at a time)');
    this.#running = true;
    try {
      const r = await this.#open();
      // Closed while opening (its signal aborted, say): close() found no pipeline to stop and has
      // closed the tokenizer, so a pipeline built now would fail every document.
      if (this.#closed) return;
      const pipeline = this.#build(r);
      this.#pipeline = pipeline;
      for await (const batch of pipeline) {
        this.#taken = batch.snapshot;
        yield batch as B;
      }
    } finally {
      await this.#endPass();
    }
  }

  /** Where the consumer stands, as JSON: pass it as `resumeFrom` (same source and packing) to continue exactly there. */
  state(): TextLoaderState {
    const order = this.#resolvedNow().order;
    const taken = this.#taken;
    if (!taken) {
      // Between passes (or before the first batch): where the next pass starts.
      const docs = this.#start.docs ?? order.state(0, undefined);
      const carry = this.#start.carry;
      return {
        kind: 'tandem.text',
        version: 1,
        docs,
        packer: this.#start.packer ?? { next: 0, pending: [] },
        ...(carry && carry.length > 0 ? { carry } : {}),
        ...(this.#start.after ? { after: this.#start.after } : {}),
        packing: this.#packing(),
      };
    }
    // Negative document numbers are carried pieces (a regroup's): they stay carried by key.
    const carry: Array<[string, number]> = taken.pending.filter(([i]) => i < 0).map(([, start, key]) => [key, start]);
    const pending = taken.pending.filter(([i]) => i >= 0);
    const at = Packer.resumeAt({ next: taken.next, pending });
    const packer: PackerSnapshot = { next: taken.next - at, pending: pending.map(([i, start, key]) => [i - at, start, key]) };
    return {
      kind: 'tandem.text',
      version: 1,
      docs: order.state(this.#stepBase + at, undefined),
      packer,
      ...(carry.length > 0 ? { carry } : {}),
      ...(order.resume ? { after: order.state(this.#stepBase + taken.next, undefined) } : {}),
      packing: this.#packing(),
    };
  }

  /** Tokens, padding and documents packed so far; `padding / positions` is the padding share. */
  packing(): Readonly<PackingCounts> & { paddingShare: number } {
    const c = this.#counts;
    return { ...c, paddingShare: c.positions === 0 ? 0 : c.padding / c.positions };
  }

  stats(): PipelineStats | undefined {
    return this.#pipeline?.stats();
  }

  bottleneck(): Bottleneck | undefined {
    const stats = this.stats();
    return stats && bottleneck(stats);
  }

  /** The stage table with the bottleneck named, and the padding share. */
  summary(): string {
    const stats = this.stats();
    if (!stats) return 'textLoader: not started';
    const p = this.packing();
    return `${formatStats(stats)}\npacking (${this.#o.pack}): ${p.rows} rows of ${this.#o.seqLen}, ${p.documents} documents, padding ${(100 * p.paddingShare).toFixed(1)}% of positions`;
  }

  /** Every document not delivered, with its key, stage ('read', 'tokenize') and typed error. */
  failures(): readonly FailureRecord[] {
    return this.#pipeline && this.#running ? [...this.#failures, ...this.#pipeline.failures()] : this.#failures;
  }

  failureCount(): number {
    return this.#failureCount + (this.#pipeline && this.#running ? this.#pipeline.failureCount() : 0);
  }

  /** Awaits `wait` (a GPU fence) as the consumer's wait for `resource`, so the statistics do not blame the loader. */
  async waitFor<T>(wait: Promise<T>, resource = 'GPU'): Promise<T> {
    const pipeline = this.#pipeline;
    return pipeline && this.#running ? pipeline.consumer.waitFor(wait, resource) : wait;
  }

  /** GPU buffer sets lent to batches not yet released. */
  held(): number {
    return this.#openedNow?.ring?.held ?? 0;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#onAbort) this.#o.signal?.removeEventListener('abort', this.#onAbort);
    await this.#pipeline?.stop();
    const r = await this.#opened?.catch(() => undefined);
    if (!r) return;
    await r.tokenizer?.close();
    await r.ring?.close();
    r.gpuOwned?.close(); // a context made around the caller's device: close() leaves the device alone
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #packing(): TextLoaderState['packing'] {
    const o = this.#o;
    return { pack: o.pack, seqLen: o.seqLen, fitWindow: o.fitWindow, bos: o.bos ?? null, eos: o.eos ?? null };
  }

  #openedNow: Opened | undefined;

  #resolvedNow(): ResolvedText {
    const r = this.#openedNow;
    if (!r) throw new LoaderError('busy', 'textLoader.state: the loader has not started yet (take a batch first)');
    return r.resolved;
  }

  #open(): Promise<Opened> {
    this.#opened ??= (async () => {
      const o = this.#o;
      const resolved = await resolveText(this.#source, o);
      let tokenizer: TokenizerPool | undefined;
      if (!resolved.tokens) {
        if (!o.tokenizer) throw new TextError('tokenizer-failed', 'textLoader: a text source needs `tokenizer` (token shards do not)');
        tokenizer = await TokenizerPool.open(o.tokenizer, {
          ...(o.tokenizerWorkers === undefined ? {} : { workers: o.tokenizerWorkers }),
          ...(o.bos === undefined ? {} : { bos: o.bos }),
          ...(o.eos === undefined ? {} : { eos: o.eos }),
          ...(o.vocabSize === undefined ? {} : { vocabSize: o.vocabSize }),
          maxDocumentBytes: o.maxDocumentBytes,
          maxDocumentTokens: o.maxDocumentTokens,
          textField: o.textField,
        });
      }
      let ring: TokenRing | undefined;
      let gpuOwned: GpuContext | undefined;
      const to = o.to;
      const jax = isJax(to) ? to : undefined;
      // jax-js on WebGPU: batches go up through the ring on jax-js's own device (it cannot take ours).
      const device = jax
        ? jax.defaultDevice() === 'webgpu'
          ? jax.getWebGPUDevice()
          : undefined
        : to !== 'cpu' && !isTfjs(to)
          ? to
          : undefined;
      if (device !== undefined) {
        const gpu: GpuContext = 'queue' in device ? await acquireGpu({ device: device as GPUDevice }) : (device as GpuContext);
        if (gpu !== device) gpuOwned = gpu;
        ring = new TokenRing(gpu, o.batchSize, o.seqLen);
      }
      const opened: Opened = { resolved, tokenizer, ring, tf: isTfjs(to) ? to : undefined, jax, gpuOwned };
      this.#openedNow = opened;
      return opened;
    })();
    return this.#opened;
  }

  #build(r: Opened): Pipeline<Delivered> {
    const o = this.#o;
    const order = r.resolved.order;
    let epoch = 0;
    let offset = 0;
    if (this.#start.docs) ({ epoch, offset } = startOf(this.#start.docs, order));
    const perEpoch = order.perEpoch;
    this.#stepBase = perEpoch === undefined ? (order.resume ? 0 : offset) : epoch * perEpoch + offset;
    // One stream over `epochs` epochs: a pass continues where the last one stopped, up to their end.
    const carry = this.#start.carry ?? [];
    const items = numbered(r.resolved.items(epoch, offset, Math.max(o.epochs - epoch, 0)), carry, r.resolved);
    const tokenizer = r.tokenizer;
    const vocab = o.vocabSize;
    const read = async (x: Numbered): Promise<{ index: number; key: string; doc: RawDocument }> => ({
      index: x.index,
      key: x.key,
      doc: await x.item.read(),
    });
    const tokenize = async (
      x: { index: number; key: string; doc: RawDocument },
      ctx: { signal: AbortSignal },
    ): Promise<NumberedDocument> => {
      const doc = x.doc;
      if ('tokens' in doc)
        return { index: x.index, key: x.key, tokens: withSpecials(doc.tokens, o.bos, o.eos, vocab, x.key, o.maxDocumentTokens) };
      if (!tokenizer) throw new TextError('tokenizer-failed', `${x.key}: no tokenizer for a text document`);
      const encoded = await tokenizer.encode({ key: x.key, bytes: doc.bytes, ext: doc.ext }, ctx.signal);
      return { index: x.index, key: x.key, tokens: encoded.tokens };
    };
    const pool = new TokenBatchPool(o.batchSize, o.seqLen);
    const packerOptions = { mode: o.pack, seqLen: o.seqLen, padId: o.pad, fitWindow: o.fitWindow };
    const start = this.#start.packer ?? { next: 0, pending: [] };
    const from: PackerSnapshot | undefined =
      carry.length === 0 && !this.#start.packer
        ? undefined
        : {
            next: start.next,
            pending: [...carry.map(([key, s], i): [number, number, string] => [i - carry.length, s, key]), ...start.pending],
          };
    const packed = new PipelineBuilder()
      .addSource(items)
      .pipe(read, { name: 'read', concurrency: o.readConcurrency })
      .pipe(tokenize, { name: 'tokenize', concurrency: tokenizer?.concurrency ?? 1 })
      .aggregate(() => new PackingAggregator(packerOptions, pool, this.#counts, from), { name: 'pack' })
      .disaggregate({ name: 'batches' });
    const ring = r.ring;
    const tf = r.tf;
    const jax = r.jax;
    const onDevice: PipelineBuilder<PackedBatch | PackedDeviceBatch> = ring
      ? packed.pipe((b: PackedBatch, ctx) => ring.convert(b, ctx), { name: 'to-gpu', concurrency: 1 })
      : packed;
    const last = jax
      ? onDevice.pipe((b: PackedBatch | PackedDeviceBatch) => toJax(jax, b), { name: 'to-jax', concurrency: 1 })
      : tf && isTfjs(tf)
        ? packed.pipe((b: PackedBatch) => tfjsTokens(tf, b), { name: 'to-tfjs', concurrency: 1 })
        : (onDevice as PipelineBuilder<Delivered>);
    return (last as PipelineBuilder<Delivered>).addSink(2).build({ failureBudget: o.failureBudget });
  }

  /** A pass that ends (or breaks) leaves the loader where the consumer stands: the next pass continues there. */
  async #endPass(): Promise<void> {
    this.#running = false;
    const pipeline = this.#pipeline;
    if (pipeline) {
      await pipeline.stop();
      this.#failures.push(...pipeline.failures());
      this.#failureCount += pipeline.failureCount();
    }
    if (this.#openedNow && this.#taken) {
      const state = this.state();
      const { docs, packer, carry, after } = state;
      this.#start = { docs, packer, ...(carry ? { carry } : {}), ...(after ? { after } : {}) };
      this.#taken = undefined;
    }
  }
}

/**
 * Packed token batches from `source` (token shards, text shards, text files or `{ texts }`),
 * tokenised off the event loop and sent where `options.to` says. Options are checked now; workers
 * and buffers are made on the first `for await`.
 */
export function textLoader<const O extends TextLoaderOptions>(source: TextSource, options?: O): TextLoader<TextLoaderBatch<O>> {
  return new TextLoader<TextLoaderBatch<O>>(source, checkTextLoaderOptions(options ?? {}));
}
