// The text loader's tokenizer stage: document bytes in, one TokenDocument out (BOS + ids + EOS),
// or a TextError under the document's key. A tokenizer given as JSON or a URL runs in the
// pipeline's worker executor, built once per worker (tokenize-worker.js), so the event loop only
// posts bytes and takes ids back, many documents per message (tokenize-groups.ts); a tokenizer
// object the caller made runs inline, on the event loop, because it cannot cross into a worker.
import { OptionChecker, OptionError, WorkerError } from '../errors/index.ts';
import { WorkerPoolExecutor, workerTask } from '../pipeline/index.ts';
import { availableCores, readText } from '../runtime/index.ts';
import { TextError } from './errors.ts';
import { DocumentGroups, GROUP_DOCS, type TokenizerRoad } from './tokenize-groups.ts';
import type { TokenDocument, TokenEncoder } from './types.ts';

/** A tokenizer whose `encode` gives an encoding with `ids`, as a Hugging Face `Tokenizer` does. */
export interface IdsEncoder {
  encode(text: string, options?: { add_special_tokens?: boolean }): { readonly ids: ArrayLike<number> };
}

/**
 * Which tokenizer: a Hugging Face tokenizer.json (its text or parsed object, or where to read it;
 * `config` is its tokenizer_config.json) run in workers, or an encoder object run inline. A
 * byte-level BPE tokenizer.json (GPT-2's, Llama 3's, Qwen 3's or GPT-4o's shape) runs on Tandem's
 * own byte-level BPE, a SentencePiece-style one (Llama 2's, Gemma 3's) on its metaspace BPE, which
 * give tokenizers.js's ids faster (docs/text.md); `fast: false` keeps every document on
 * tokenizers.js. `TokenizerPool.roads()` says which road was taken.
 */
export type TokenizerSpec =
  | TokenEncoder
  | IdsEncoder
  | { readonly json: string | object; readonly config?: object; readonly fast?: boolean }
  | { readonly url: string | URL; readonly config?: object; readonly fast?: boolean };

export interface TokenizerPoolOptions {
  /** Worker count for a JSON or URL tokenizer; default the machine's cores − 1, at least 1. */
  workers?: number;
  /** Prepended to every document's ids. */
  bos?: number;
  /** Appended to every document's ids. */
  eos?: number;
  /** A longer document fails as 'too-large' before it is decoded. */
  maxDocumentBytes: number;
  /** A document the tokenizer makes more ids of (BOS and EOS not counted) fails as 'too-large'. */
  maxDocumentTokens: number;
  /** The string member of a `.json` document that holds its text; default 'text'. */
  textField?: string;
  /** When given, an id at or past it fails the document as 'token-out-of-range'. */
  vocabSize?: number;
  /** Aborts open(). */
  signal?: AbortSignal;
}

export type { TokenizerRoad } from './tokenize-groups.ts';

/** Which road a pool's tokenizer took, and how many documents each road has tokenized so far. */
export interface TokenizerRoads {
  /**
   * The road the tokenizer was built on: Tandem's own 'byte-level-bpe' or 'metaspace-bpe' for a
   * tokenizer.json of a shape they cover, 'tokenizers.js' for any other (or with `fast: false`),
   * 'inline' for the caller's encoder.
   */
  readonly road: TokenizerRoad;
  /**
   * Documents tokenized on each road; a document Tandem's road leaves to tokenizers.js (one
   * holding an added token matched after normalizing, say) counts under 'tokenizers.js'. Documents
   * that failed are not counted.
   */
  readonly documents: Readonly<Record<TokenizerRoad, number>>;
}

/** One document to tokenize: `ext` picks how its bytes are read (`json`/`.json`: a JSON object). */
export interface TextDocumentBytes {
  readonly key: string;
  readonly bytes: Uint8Array;
  readonly ext: string;
}

const WHERE = 'TokenizerPool.open options';
const KNOWN = ['workers', 'bos', 'eos', 'maxDocumentBytes', 'maxDocumentTokens', 'textField', 'vocabSize', 'signal'] as const;
const MAX_ID = 2 ** 32 - 1;
const JSON_EXT = /(^|\.)json$/i;
const NO_SPECIAL_TOKENS = { add_special_tokens: false } as const;
const workerModule = (): URL => new URL('./tokenize-worker.js', import.meta.url);
/** tokenize-entry.js, and its start for Deno and browsers in the one form bundlers follow. */
const workerEntry = {
  url: new URL('./tokenize-entry.js', import.meta.url),
  start: () => new Worker(new URL('./tokenize-entry.js', import.meta.url), { type: 'module' }),
};

interface Limits {
  readonly bos: number | undefined;
  readonly eos: number | undefined;
  readonly maxDocumentBytes: number;
  readonly maxDocumentTokens: number;
  readonly textField: string;
  readonly vocabSize: number | undefined;
}

/** How a document's text becomes ids: in workers, or by the caller's encoder inline. */
type Road =
  | { kind: 'workers'; executor: WorkerPoolExecutor; groups: DocumentGroups }
  | { kind: 'inline'; encoder: TokenEncoder | IdsEncoder };

export class TokenizerPool {
  /**
   * Documents worth having in flight at once: two groups per worker (one running, one filling or
   * posted), 1 inline.
   */
  readonly concurrency: number;
  readonly #road: Road;
  readonly #limits: Limits;
  #closed = false;
  #inlineDocuments = 0;

  private constructor(road: Road, limits: Limits, workers: number) {
    this.#road = road;
    this.#limits = limits;
    this.concurrency = road.kind === 'workers' ? 2 * workers * GROUP_DOCS : 1;
  }

  /**
   * Checks the options, then for a JSON or URL tokenizer reads it and starts a first worker, so a
   * tokenizer.json Hugging Face refuses fails here (TextError 'tokenizer-failed'), not per document.
   */
  static async open(spec: TokenizerSpec, options: TokenizerPoolOptions): Promise<TokenizerPool> {
    const o = new OptionChecker(WHERE, options, KNOWN);
    for (const field of ['maxDocumentBytes', 'maxDocumentTokens'] as const)
      if (o.raw(field) === undefined) o.fail(field, 'a positive integer (it has no default)');
    const vocabSize = o.optionalInteger('vocabSize', 1, MAX_ID + 1);
    const idLimit = vocabSize === undefined ? MAX_ID : vocabSize - 1;
    const textField = o.raw('textField') ?? 'text';
    if (typeof textField !== 'string' || textField === '') return o.fail('textField', 'a non-empty string');
    const limits: Limits = {
      bos: o.optionalInteger('bos', 0, idLimit),
      eos: o.optionalInteger('eos', 0, idLimit),
      maxDocumentBytes: o.integer('maxDocumentBytes', 0),
      maxDocumentTokens: o.integer('maxDocumentTokens', 0),
      textField,
      vocabSize,
    };
    const workers = o.integer('workers', Math.max(1, availableCores() - 1), 1, 256);
    const signal = o.signal();
    signal?.throwIfAborted();
    if (isEncoder(spec)) return new TokenizerPool({ kind: 'inline', encoder: spec }, limits, 1);
    const source = await tokenizerSource(spec, signal);
    const executor = new WorkerPoolExecutor(
      workerTask(workerModule(), 'encodeMany', { workers, init: source, entry: workerEntry }),
      workers,
    );
    const groups = new DocumentGroups(executor, workers, textField, limits.maxDocumentTokens);
    const pool = new TokenizerPool({ kind: 'workers', executor, groups }, limits, workers);
    // A probe that fails at UTF-8 decoding, before the tokenizer runs: its 'bad-utf8' says the
    // worker built the tokenizer; an init failure answers with its own error instead.
    const probe = { key: '(probe)', bytes: Uint8Array.of(0xff), ext: '' };
    const answer = await groups.runGroup([probe], signal).then(
      (results) => results[0],
      (e: unknown) => e,
    );
    if (typeof answer === 'object' && answer !== null && 'code' in answer && answer.code === 'bad-utf8') return pool;
    await executor.close();
    if (signal?.aborted) throw signal.reason;
    throw new TextError('tokenizer-failed', `TokenizerPool.open: ${messageOf(answer)}`, { cause: answer });
  }

  /** Live workers (0 for an inline tokenizer, and after close()). */
  get workers(): number {
    return this.#road.kind === 'workers' ? this.#road.executor.workers : 0;
  }

  /**
   * One document's tokens: BOS (if set), the tokenizer's ids without its own special tokens, EOS
   * (if set). The caller's bytes are not detached (workers get a copy) and must stay as they are
   * until the promise settles. Rejects with a TextError naming `doc.key`; the pool stays usable
   * for the documents after it.
   */
  async encode(doc: TextDocumentBytes, signal?: AbortSignal): Promise<TokenDocument> {
    if (this.#closed) throw new WorkerError('pool-closed', 'TokenizerPool is closed');
    const limits = this.#limits;
    if (doc.bytes.byteLength > limits.maxDocumentBytes)
      throw new TextError('too-large', `${doc.key}: ${doc.bytes.byteLength} bytes, more than maxDocumentBytes ${limits.maxDocumentBytes}`);
    const ids = this.#road.kind === 'workers' ? await this.#road.groups.encode(doc, signal) : inline(this.#road.encoder, doc, limits);
    const tokens = withSpecialTokens(doc.key, ids, limits);
    if (this.#road.kind === 'inline') this.#inlineDocuments++;
    return { key: doc.key, tokens };
  }

  /** Which road the tokenizer took and the documents each road has tokenized (see TokenizerRoads). */
  roads(): TokenizerRoads {
    if (this.#road.kind === 'inline')
      return { road: 'inline', documents: { 'byte-level-bpe': 0, 'metaspace-bpe': 0, 'tokenizers.js': 0, inline: this.#inlineDocuments } };
    const { road, documents } = this.#road.groups;
    return { road, documents: { ...documents } };
  }

  /** Terminates every worker; documents in flight reject. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#road.kind === 'workers') {
      this.#road.groups.close();
      await this.#road.executor.close();
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

function isEncoder(spec: TokenizerSpec): spec is TokenEncoder | IdsEncoder {
  if (typeof spec !== 'object' || spec === null)
    throw new OptionError('TokenizerPool.open', 'spec', spec, 'a tokenizer: an encoder, { json } or { url }');
  if (typeof (spec as { encode?: unknown }).encode === 'function') return true;
  const fast = (spec as { fast?: unknown }).fast;
  if (fast !== undefined && typeof fast !== 'boolean') throw new OptionError('TokenizerPool.open', 'spec.fast', fast, 'true or false');
  if ('json' in spec && (typeof spec.json === 'string' || (typeof spec.json === 'object' && spec.json !== null))) return false;
  if ('url' in spec && (typeof spec.url === 'string' || spec.url instanceof URL)) return false;
  throw new OptionError('TokenizerPool.open', 'spec', spec, 'a tokenizer: an object with encode(text), { json } or { url }');
}

/** What each worker's `init` gets: the tokenizer.json (text or object) and its config. */
async function tokenizerSource(
  spec: Exclude<TokenizerSpec, TokenEncoder | IdsEncoder>,
  signal: AbortSignal | undefined,
): Promise<{ tokenizerJson: string | object; tokenizerConfig: object | undefined; fast: boolean }> {
  const fast = spec.fast !== false;
  if ('json' in spec) return { tokenizerJson: spec.json, tokenizerConfig: spec.config, fast };
  const base = (globalThis as { location?: { href?: string } }).location?.href;
  const url = new URL(spec.url, base);
  let text: string;
  try {
    text = url.protocol === 'file:' ? await readText(url) : await fetchText(url, signal);
  } catch (e) {
    throw new TextError('tokenizer-failed', `TokenizerPool.open: cannot read the tokenizer at ${url.href}: ${messageOf(e)}`, { cause: e });
  }
  signal?.throwIfAborted();
  return { tokenizerJson: text, tokenizerConfig: spec.config, fast };
}

async function fetchText(url: URL, signal: AbortSignal | undefined): Promise<string> {
  const response = await fetch(url, signal ? { signal } : {});
  if (!response.ok) throw new TextError('tokenizer-failed', `HTTP ${response.status} for ${url.href}`);
  return response.text();
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The inline road: the same reading rules as tokenize-worker.js, on the caller's thread. */
function inline(encoder: TokenEncoder | IdsEncoder, doc: TextDocumentBytes, limits: Limits): ArrayLike<number> {
  const text = documentText(doc, limits.textField);
  let ids: ArrayLike<number>;
  try {
    // An HF Tokenizer reads the second argument (no BOS/EOS of its own); a plain encoder ignores it.
    const out: unknown = (encoder as IdsEncoder).encode(text, NO_SPECIAL_TOKENS);
    const found = idsOf(out);
    if (found === undefined) throw new TypeError('encode(text) gave neither an array of ids nor an encoding with ids');
    ids = found;
  } catch (e) {
    throw new TextError('tokenizer-failed', `${doc.key}: the tokenizer threw: ${messageOf(e)}`, { cause: e });
  }
  if (ids.length > limits.maxDocumentTokens)
    throw new TextError('too-large', `${doc.key}: ${ids.length} tokens, more than maxDocumentTokens ${limits.maxDocumentTokens}`);
  return ids;
}

function documentText(doc: TextDocumentBytes, textField: string): string {
  let text: string;
  try {
    text = utf8.decode(doc.bytes);
  } catch (e) {
    throw new TextError('bad-utf8', `${doc.key}: not valid UTF-8 (${messageOf(e)})`);
  }
  if (!JSON_EXT.test(doc.ext)) return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new TextError('bad-json', `${doc.key}: not valid JSON (${messageOf(e)})`);
  }
  const field =
    typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[textField] : undefined;
  if (typeof field !== 'string') throw new TextError('bad-json', `${doc.key}: no string at field "${textField}"`);
  return field;
}

/** BOS + ids + EOS, every id checked against the vocabulary (an inline encoder may give anything). */
function withSpecialTokens(key: string, ids: ArrayLike<number>, limits: Limits): Uint32Array {
  const { bos, eos } = limits;
  const limit = limits.vocabSize ?? MAX_ID + 1;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as number;
    if (!(Number.isInteger(id) && id >= 0 && id < limit))
      throw new TextError('token-out-of-range', `${key}: id ${id} at position ${i} is not an integer in [0, ${limit})`);
  }
  if (bos === undefined && eos === undefined && ids instanceof Uint32Array) return ids;
  const head = bos === undefined ? 0 : 1;
  const tokens = new Uint32Array(head + ids.length + (eos === undefined ? 0 : 1));
  if (bos !== undefined) tokens[0] = bos;
  tokens.set(ids, head);
  if (eos !== undefined) tokens[tokens.length - 1] = eos;
  return tokens;
}

/** The ids in what an encoder gave: an array-like of numbers, or an encoding's `ids`. */
function idsOf(out: unknown): ArrayLike<number> | undefined {
  if (typeof out !== 'object' || out === null) return undefined;
  const ids = (out as { ids?: unknown }).ids;
  const list = ids === undefined ? out : ids;
  return typeof list === 'object' && list !== null && typeof (list as { length?: unknown }).length === 'number'
    ? (list as ArrayLike<number>)
    : undefined;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
