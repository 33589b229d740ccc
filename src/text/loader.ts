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
import { OptionError } from '../errors/index.ts';
import { LoaderError } from '../loader/index.ts';
import { isJax, isTfjs, LoaderShell, tfjsInt32 } from '../loader/internal.ts';
import { acquireGpu, type GpuContext } from '../gpu/index.ts';
import { PipelineBuilder, type Pipeline } from '../pipeline/index.ts';
import { PackingAggregator, TokenBatchPool, type NumberedDocument, type PackedBatch, type PackingCounts } from './batches.ts';
import { TextError } from './errors.ts';
import { openTokenRing, type PackedDeviceBatch, type TokenRing } from './gpu-ring.ts';
import { checkTextLoaderOptions, type JaxNamespace, type TextLoaderOptions, type TextLoaderSettings } from './options.ts';
import { Packer, type PackerSnapshot } from './pack.ts';
import { resolveText, startOf, type RawDocument, type ResolvedText, type TextSource } from './sources.ts';
import { checkState, tokenizerIdentity, type TextLoaderState } from './state.ts';
import { TokenizerPool, type TokenizerRoads } from './tokenizer.ts';
import type { TokenBatch, TokenDeviceBatch, TokenTensors } from './types.ts';
import { numbered, toJax, toTfjs, withSpecials, type JaxTokenBatch, type Numbered } from './stages.ts';

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

export class TextLoader<B = TokenBatch> extends LoaderShell<B, Opened, Delivered> {
  protected readonly loaderName = 'textLoader';
  readonly #source: TextSource;
  readonly #o: TextLoaderSettings;
  #start: Start;
  /** The packer's position after the last batch the consumer took, relative to `#start.docs`. */
  #taken: PackerSnapshot | undefined;
  #stepBase = 0;
  /** The epoch the pass in progress (or broken off) ends before; undefined between passes. */
  #passEnd: number | undefined;
  /** The epoch setEpoch asked the next pass to start at. */
  #setEpoch: number | undefined;
  /** The tokenizer as a state names it (computed once: a tokenizer.json may be large). */
  #tokenizerId: string | null | undefined;
  readonly #counts: PackingCounts = { batches: 0, rows: 0, positions: 0, padding: 0, documents: 0 };

  constructor(source: TextSource, settings: TextLoaderSettings) {
    super(settings.signal);
    this.#source = source;
    this.#o = settings;
    const from = settings.resumeFrom;
    if (from) checkState(from, this.#packing());
    this.#start = { docs: from?.docs, packer: from?.packer, ...(from?.carry ? { carry: from.carry } : {}) };
  }

  /** Rows per batch and positions per row: every batch's shape. */
  get shape(): readonly [number, number] {
    return [this.#o.batchSize, this.#o.seqLen];
  }

  /**
   * Starts the next pass at the beginning of `epoch` (PyTorch's `set_epoch`): a new shuffle; the
   * packer starts empty. List sources only: a shard source is one stream over its epochs.
   */
  setEpoch(epoch: number): void {
    if (!Number.isInteger(epoch) || epoch < 0) throw new OptionError('textLoader.setEpoch', 'epoch', epoch, 'a whole number');
    this.betweenPasses('setEpoch');
    const order = this.opened?.resolved.order;
    if (order && order.perEpoch === undefined)
      throw new OptionError(
        'textLoader.setEpoch',
        'epoch',
        epoch,
        'left out for a shard or stream source (it is read once, in its own order)',
      );
    this.#start = { docs: undefined, packer: undefined };
    this.#taken = undefined;
    this.#passEnd = undefined;
    this.#setEpoch = epoch;
  }

  protected override batchTaken(batch: Delivered): void {
    this.#taken = batch.snapshot;
  }

  /** Where the consumer stands, as JSON: pass it as `resumeFrom` (same source and packing) to continue exactly there. */
  state(): TextLoaderState {
    const order = this.#resolvedNow().order;
    const taken = this.#taken;
    if (!taken) {
      // Between passes (or before the first batch): where the next pass starts.
      const docs = this.#start.docs ?? order.state((this.#setEpoch ?? 0) * (order.perEpoch ?? 0), undefined);
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
      docs: order.state(this.#stepBase + at, this.#passEnd),
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

  protected override summaryExtra(): string {
    const p = this.packing();
    return `packing (${this.#o.pack}): ${p.rows} rows of ${this.#o.seqLen}, ${p.documents} documents, padding ${(100 * p.paddingShare).toFixed(1)}% of positions`;
  }

  /**
   * Which road the tokenizer took (Tandem's byte-level or metaspace BPE for the tokenizer.json
   * shapes they cover, tokenizers.js for the rest, 'inline' for the caller's encoder) and how many
   * documents each road has tokenized; undefined before the first `for await`, or for token shards.
   */
  tokenizerRoads(): TokenizerRoads | undefined {
    return this.opened?.tokenizer?.roads();
  }

  /** GPU buffer sets lent to batches not yet released. */
  held(): number {
    return this.opened?.ring?.held() ?? 0;
  }

  protected async closeOpened(r: Opened): Promise<void> {
    await r.resolved.close?.();
    await r.tokenizer?.close();
    await r.ring?.close();
    r.gpuOwned?.close(); // a context made around the caller's device: close() leaves the device alone
  }

  #packing(): TextLoaderState['packing'] {
    const o = this.#o;
    this.#tokenizerId ??= tokenizerIdentity(o.tokenizer);
    return { pack: o.pack, seqLen: o.seqLen, fitWindow: o.fitWindow, bos: o.bos ?? null, eos: o.eos ?? null, tokenizer: this.#tokenizerId };
  }

  #resolvedNow(): ResolvedText {
    const r = this.opened;
    if (!r) throw new LoaderError('busy', 'textLoader.state: the loader has not started yet (take a batch first)');
    return r.resolved;
  }

  protected async openResources(): Promise<Opened> {
    const o = this.#o;
    const resolved = await resolveText(this.#source, o);
    let tokenizer: TokenizerPool | undefined;
    let ring: TokenRing | undefined;
    let gpuOwned: GpuContext | undefined;
    try {
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
        ring = openTokenRing(gpu, o.batchSize, o.seqLen);
      }
      return { resolved, tokenizer, ring, tf: isTfjs(to) ? to : undefined, jax, gpuOwned };
    } catch (error) {
      // Opening failed part-way: what was made so far is closed here, as close() would have.
      await this.closeOpened({ resolved, tokenizer, ring, tf: undefined, jax: undefined, gpuOwned });
      throw error;
    }
  }

  protected buildPass(r: Opened): Pipeline<Delivered> {
    return this.#build(r);
  }

  #build(r: Opened): Pipeline<Delivered> {
    const o = this.#o;
    const order = r.resolved.order;
    let epoch = this.#setEpoch ?? 0;
    let offset = 0;
    let until: number | undefined;
    if (this.#start.docs) ({ epoch, offset, until } = startOf(this.#start.docs, order));
    this.#setEpoch = undefined;
    const perEpoch = order.perEpoch;
    this.#stepBase = perEpoch === undefined ? (order.resume ? 0 : offset) : epoch * perEpoch + offset;
    // A list source: a pass runs `epochs` epochs from where the last one stopped (a pass broken off
    // continues up to its own end). A shard source is one stream over all `epochs`, read once.
    this.#passEnd = perEpoch === undefined ? o.epochs : (this.#passEnd ?? until ?? epoch + o.epochs);
    const carry = this.#start.carry ?? [];
    const items = numbered(r.resolved.items(epoch, offset, Math.max(this.#passEnd - epoch, 0)), carry, r.resolved);
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
        ? packed.pipe((b: PackedBatch) => toTfjs(tf, b), { name: 'to-tfjs', concurrency: 1 })
        : (onDevice as PipelineBuilder<Delivered>);
    return (last as PipelineBuilder<Delivered>).addSink(2).build({ failureBudget: o.failureBudget, consumer: o.consumer });
  }

  /** A pass that ends (or breaks) leaves the loader where the consumer stands: the next pass continues there. */
  protected override passEnded(finished: boolean): void {
    if (finished) this.#passEnd = undefined;
    if (!this.#taken) return;
    const { docs, packer, carry, after } = this.state();
    this.#start = { docs, packer, ...(carry ? { carry } : {}), ...(after ? { after } : {}) };
    this.#taken = undefined;
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
