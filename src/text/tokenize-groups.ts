// The worker road of the tokenizer stage (tokenizer.ts): documents go to the workers in groups,
// one message per group, because a postMessage round trip per document cost more CPU than
// tokenizing most documents. A group is posted when it is full (GROUP_DOCS documents or
// GROUP_BYTES of text) or at the end of the current turn while a worker has no group (shared out
// among the free workers); while every worker has one, documents wait for the first group back,
// so groups fill by themselves under load and a lone document is still not held back. Each document settles on its own.
import { TandemError, WorkerError } from '../errors/index.ts';
import type { WorkerPoolExecutor } from '../pipeline/index.ts';
import { TextError, type TextErrorCode } from './errors.ts';

/** A document as tokenizer.ts's `TextDocumentBytes` gives it (kept here: no import cycle). */
interface DocumentBytes {
  readonly key: string;
  readonly bytes: Uint8Array;
  readonly ext: string;
}

/** Documents per message: enough that messaging is a small share of a group's cost. */
export const GROUP_DOCS = 32;
/** Text per message: a few long documents make a group on their own. */
export const GROUP_BYTES = 64 * 1024;

const TEXT_CODES = new Set<string>(['bad-utf8', 'too-large', 'bad-json', 'no-text', 'tokenizer-failed', 'token-out-of-range']);

/** What tokenize-worker.js's `encodeMany` gets: the documents' bytes end to end. */
export interface DocumentGroup {
  readonly bytes: Uint8Array;
  /** Document i is bytes [ends[i - 1], ends[i]). */
  readonly ends: Uint32Array;
  readonly exts: string[];
  readonly textField: string;
  readonly maxDocumentTokens: number;
}

/** One document's answer from `encodeMany`. */
export type DocumentResult = Uint32Array | { readonly code: string; readonly message: string };

/**
 * Which road turns a document's text into ids: Tandem's own byte-level or SentencePiece-style BPE
 * (src/text/byte-level-bpe.js, metaspace-bpe.js), tokenizers.js (a tokenizer.json shape neither
 * covers, `fast: false`, or a document a road leaves to it), or the caller's encoder ('inline').
 */
export type TokenizerRoad = 'byte-level-bpe' | 'metaspace-bpe' | 'tokenizers.js' | 'inline';
export const TOKENIZER_ROADS: readonly TokenizerRoad[] = ['byte-level-bpe', 'metaspace-bpe', 'tokenizers.js', 'inline'];

/** A group's answer from `encodeMany`: the road its worker built, and per document its result and whether that road gave it. */
export interface GroupAnswer {
  readonly road: string;
  readonly onRoad: Uint8Array;
  readonly results: readonly DocumentResult[];
}

/** The road a worker names, checked (a worker that names another is the host's bug, counted as tokenizers.js). */
export function roadOf(name: string): TokenizerRoad {
  return name === 'byte-level-bpe' || name === 'metaspace-bpe' ? name : 'tokenizers.js';
}

interface Waiting {
  readonly doc: DocumentBytes;
  readonly signal: AbortSignal | undefined;
  resolve(ids: Uint32Array): void;
  reject(e: unknown): void;
}

export class DocumentGroups {
  readonly #executor: WorkerPoolExecutor;
  readonly #workers: number;
  readonly #textField: string;
  readonly #maxDocumentTokens: number;
  /** Group tasks are not aborted as a whole (their documents are, one by one): a never-aborted signal. */
  readonly #never = new AbortController().signal;
  #pending: Waiting[] = [];
  #pendingBytes = 0;
  readonly #posted = new Set<Waiting[]>();
  readonly #watched = new WeakSet<AbortSignal>();
  #turnQueued = false;
  #closed = false;
  /** The road the workers built (from the first answer), and documents tokenized on each road. */
  road: TokenizerRoad = 'tokenizers.js';
  readonly documents: Record<TokenizerRoad, number> = { 'byte-level-bpe': 0, 'metaspace-bpe': 0, 'tokenizers.js': 0, inline: 0 };

  constructor(executor: WorkerPoolExecutor, workers: number, textField: string, maxDocumentTokens: number) {
    this.#executor = executor;
    this.#workers = workers;
    this.#textField = textField;
    this.#maxDocumentTokens = maxDocumentTokens;
  }

  /** One group of the given documents, posted now, for open()'s probe; rejects only as a whole. */
  async runGroup(docs: readonly DocumentBytes[], signal: AbortSignal | undefined): Promise<readonly DocumentResult[]> {
    const answer = (await this.#executor.run(this.#group(docs), signal ?? this.#never)) as GroupAnswer;
    this.road = roadOf(answer.road);
    return answer.results;
  }

  /** The document's ids (no BOS/EOS), or a TextError naming its key; abort rejects it alone. */
  encode(doc: DocumentBytes, signal: AbortSignal | undefined): Promise<Uint32Array> {
    if (this.#closed) return Promise.reject(new WorkerError('pool-closed', 'TokenizerPool is closed'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (signal !== undefined) this.#watch(signal);
    return new Promise((resolve, reject) => {
      this.#pending.push({ doc, signal, resolve, reject });
      this.#pendingBytes += doc.bytes.byteLength;
      if (this.#pending.length >= GROUP_DOCS || this.#pendingBytes >= GROUP_BYTES) this.#post();
      else this.#queueTurnEnd();
    });
  }

  /** Documents not yet posted reject with 'pool-closed'; posted ones reject when the executor closes. */
  close(): void {
    this.#closed = true;
    const pending = this.#takePending();
    const closed = new WorkerError('pool-closed', 'TokenizerPool closed before the document was posted');
    for (const w of pending) w.reject(closed);
  }

  #queueTurnEnd(): void {
    if (this.#turnQueued) return;
    this.#turnQueued = true;
    queueMicrotask(this.#turnEnd);
  }

  /** What waits goes to the free workers, shared out among them so that none idles. */
  readonly #turnEnd = (): void => {
    this.#turnQueued = false;
    const free = this.#workers - this.#posted.size;
    if (this.#pending.length === 0 || free <= 0 || this.#closed) return;
    const waiting = this.#takePending();
    const parts = Math.min(free, waiting.length);
    for (let p = 0, from = 0; p < parts; p++) {
      const to = Math.round(((p + 1) * waiting.length) / parts);
      this.#postGroup(parts === 1 ? waiting : waiting.slice(from, to));
      from = to;
    }
  };

  #takePending(): Waiting[] {
    const pending = this.#pending;
    this.#pending = [];
    this.#pendingBytes = 0;
    return pending;
  }

  #post(): void {
    this.#postGroup(this.#takePending());
  }

  #postGroup(waiting: Waiting[]): void {
    this.#posted.add(waiting);
    this.#executor.run(this.#group(waiting.map((w) => w.doc)), this.#never).then(
      (answer) => this.#settle(waiting, answer as GroupAnswer),
      (e: unknown) => this.#fail(waiting, e),
    );
  }

  /** The documents' bytes copied end to end (the caller's stay attached), one buffer to transfer. */
  #group(docs: readonly DocumentBytes[]): DocumentGroup {
    let total = 0;
    for (const d of docs) total += d.bytes.byteLength;
    const bytes = new Uint8Array(total);
    const ends = new Uint32Array(docs.length);
    const exts = new Array<string>(docs.length);
    let at = 0;
    for (const [i, d] of docs.entries()) {
      bytes.set(d.bytes, at);
      at += d.bytes.byteLength;
      ends[i] = at;
      exts[i] = d.ext;
    }
    return { bytes, ends, exts, textField: this.#textField, maxDocumentTokens: this.#maxDocumentTokens };
  }

  #settle(waiting: Waiting[], answer: GroupAnswer): void {
    this.#groupBack(waiting);
    const { results, onRoad } = answer;
    const road = roadOf(answer.road);
    for (const [i, w] of waiting.entries()) {
      const r = results[i];
      if (r instanceof Uint32Array) {
        this.documents[onRoad[i] === 1 ? road : 'tokenizers.js']++;
        w.resolve(r);
      } else if (r === undefined) w.reject(new TextError('tokenizer-failed', `${w.doc.key}: the worker gave no result`));
      else w.reject(new TextError(TEXT_CODES.has(r.code) ? (r.code as TextErrorCode) : 'tokenizer-failed', `${w.doc.key}: ${r.message}`));
    }
  }

  /** The whole group failed (a worker crashed, the pool broke or closed): each document fails with it. */
  #fail(waiting: Waiting[], e: unknown): void {
    this.#groupBack(waiting);
    const closing = this.#closed || (e instanceof WorkerError && e.code === 'pool-closed');
    const code = e instanceof TandemError && TEXT_CODES.has(e.code) ? (e.code as TextErrorCode) : 'tokenizer-failed';
    for (const w of waiting) w.reject(closing ? e : new TextError(code, `${w.doc.key}: ${messageOf(e)}`, { cause: e }));
  }

  /** A worker is free: documents held back while every worker had a group go at the end of this turn. */
  #groupBack(waiting: Waiting[]): void {
    this.#posted.delete(waiting);
    if (this.#pending.length > 0) this.#queueTurnEnd();
  }

  /** One listener per signal: on abort its documents reject, waiting ones leave their group. */
  #watch(signal: AbortSignal): void {
    if (this.#watched.has(signal)) return;
    this.#watched.add(signal);
    signal.addEventListener(
      'abort',
      () => {
        const kept = this.#pending.filter((w) => w.signal !== signal);
        for (const w of this.#pending) if (w.signal === signal) w.reject(signal.reason);
        this.#pending = kept;
        this.#pendingBytes = kept.reduce((n, w) => n + w.doc.bytes.byteLength, 0);
        // Posted documents reject now; their group still runs, and its answer for them is dropped.
        for (const group of this.#posted) for (const w of group) if (w.signal === signal) w.reject(signal.reason);
      },
      { once: true },
    );
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
