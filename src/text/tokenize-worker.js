// @ts-check
/**
 * The tokenizer stage's worker module (src/text/tokenizer.ts is the other side), run by the
 * pipeline's worker executor: `init` builds the Hugging Face tokenizer once per worker, `encodeMany`
 * turns a group of documents' bytes into their ids. Plain JavaScript so that Node 20 worker_threads, Deno
 * and browsers load it unchanged.
 *
 * Errors carry a `code` of TextError's (src/text/errors.ts), which crosses the worker boundary;
 * the host turns it back into a TextError with the document's key. The host's inline road
 * (`documentText` in tokenizer.ts) reads documents by the same rules; a shared scenario checks
 * that both give the same ids and the same codes.
 */
import { Tokenizer } from '@huggingface/tokenizers';
import { byteLevelBpe, librarySplitPattern } from './byte-level-bpe.js';
import { metaspaceBpe } from './metaspace-bpe.js';

/** @type {Tokenizer | undefined} */
let tokenizer;
/** The fast road for byte-level (byte-level-bpe.js) or SentencePiece-style (metaspace-bpe.js) BPE tokenizers; undefined for other shapes. */
/** @type {ReturnType<typeof byteLevelBpe> | ReturnType<typeof metaspaceBpe>} */
let fast;
/** Which road `init` built, reported with every group so the host can say which road a tokenizer.json took. */
/** @type {'byte-level-bpe' | 'metaspace-bpe' | 'tokenizers.js'} */
let road = 'tokenizers.js';
const utf8 = new TextDecoder('utf-8', { fatal: true });
const NO_SPECIAL_TOKENS = { add_special_tokens: false };
/** A JSON document's extension: a file's `.json`, a WebDataset member's `json` or `meta.json`. */
const JSON_EXT = /(^|\.)json$/i;

/** The worker's side of a TextError: its name and code cross the boundary, and the host makes the TextError. */
class WorkerTextError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.name = 'TextError';
    this.code = code;
  }
}

/**
 * @param {string} code
 * @param {string} message
 */
function coded(code, message) {
  return new WorkerTextError(code, message);
}

/** @param {unknown} e */
const reason = (e) => (e instanceof Error ? e.message : String(e));

/** @param {{ tokenizerJson: string | object, tokenizerConfig?: Record<string, unknown>, fast?: boolean }} setup */
export function init(setup) {
  try {
    const json = typeof setup.tokenizerJson === 'string' ? JSON.parse(setup.tokenizerJson) : setup.tokenizerJson;
    // tokenizers.js has no byte fallback for Unigram: its pieces would become the unknown token
    // where Hugging Face's tokenizers gives their bytes. Refused rather than silently other ids.
    if (json?.model?.type === 'Unigram' && json.model.byte_fallback === true)
      throw coded(
        'tokenizer-failed',
        'a Unigram model with byte_fallback is not supported (its ids would differ from Hugging Face tokenizers)',
      );
    tokenizer = new Tokenizer(json, setup.tokenizerConfig ?? {});
    const byteLevel = setup.fast === false ? undefined : byteLevelBpe(json, setup.tokenizerConfig, librarySplitPattern(tokenizer));
    const metaspace = setup.fast === false || byteLevel !== undefined ? undefined : metaspaceBpe(json, setup.tokenizerConfig);
    fast = byteLevel ?? metaspace;
    road = byteLevel !== undefined ? 'byte-level-bpe' : metaspace !== undefined ? 'metaspace-bpe' : 'tokenizers.js';
  } catch (e) {
    throw coded('tokenizer-failed', `the tokenizer JSON could not be built: ${reason(e)}`);
  }
}

/**
 * The text of one document: strict UTF-8; a `.json` document's string at `textField`.
 * @param {Uint8Array} bytes
 * @param {string} ext
 * @param {string} textField
 */
function documentText(bytes, ext, textField) {
  let text;
  try {
    text = utf8.decode(bytes);
  } catch (e) {
    throw coded('bad-utf8', `not valid UTF-8 (${reason(e)})`);
  }
  if (!JSON_EXT.test(ext)) return text;
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw coded('bad-json', `not valid JSON (${reason(e)})`);
  }
  const value = typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? doc[textField] : undefined;
  if (typeof value !== 'string') throw coded('bad-json', `no string at field "${textField}"`);
  return value;
}

/**
 * One document's ids, without special tokens (the host adds BOS and EOS), and whether Tandem's
 * road (not tokenizers.js) gave them.
 * @param {Uint8Array} bytes
 * @param {string} ext
 * @param {string} textField
 * @param {number} maxDocumentTokens
 */
function documentIds(bytes, ext, textField, maxDocumentTokens) {
  if (tokenizer === undefined) throw coded('tokenizer-failed', 'the worker was not given a tokenizer');
  const text = documentText(bytes, ext, textField);
  let ids;
  /** @type {Uint32Array | undefined} */
  let own;
  try {
    // The fast road gives tokenizers.js's ids, or undefined for a document it leaves to it.
    own = fast?.encode(text);
    ids = own ?? tokenizer.encode(text, NO_SPECIAL_TOKENS).ids;
  } catch (e) {
    throw coded('tokenizer-failed', `the tokenizer threw: ${reason(e)}`);
  }
  if (ids.length > maxDocumentTokens) throw coded('too-large', `${ids.length} tokens, more than maxDocumentTokens ${maxDocumentTokens}`);
  if (ids instanceof Uint32Array) return { ids, onRoad: own !== undefined };
  // tokenizers.js gives undefined or null for a piece it has no id for (an unknown token the
  // tokenizer cannot name, where Hugging Face's tokenizers fails): never let it become id 0.
  for (const [i, id] of ids.entries())
    if (!Number.isInteger(id) || id < 0)
      throw coded(
        'tokenizer-failed',
        `the tokenizer has no id for a piece of the text (token ${i} is ${String(id)}): an unknown token it cannot name`,
      );
  return { ids: Uint32Array.from(ids), onRoad: false };
}

/**
 * A group of documents in one message (the host batches them to spend one round trip on many):
 * their bytes end to end in `bytes`, document i at [ends[i-1], ends[i]). Each document's result
 * is its ids as a Uint32Array (whose buffer the executor transfers back) or `{ code, message }`
 * when it fails, so one bad document never fails the others of its group. `road` is the road
 * `init` built; `onRoad[i]` is 1 where that road (not tokenizers.js) gave document i's ids.
 * @param {{ bytes: Uint8Array, ends: Uint32Array, exts: string[], textField: string, maxDocumentTokens: number }} group
 * @returns {{ road: string, onRoad: Uint8Array, results: Array<Uint32Array | { code: string, message: string }> }}
 */
export function encodeMany(group) {
  const { bytes, ends, exts, textField, maxDocumentTokens } = group;
  const results = new Array(ends.length);
  const onRoad = new Uint8Array(ends.length);
  for (let i = 0, start = 0; i < ends.length; i++) {
    const end = ends[i];
    const ext = exts[i];
    // The host sends one extension per end; a group without is the host's bug, not a document's.
    if (end === undefined || ext === undefined)
      throw new RangeError(`encodeMany: document ${i} of ${ends.length} has no end or extension (${exts.length} extensions)`);
    try {
      const done = documentIds(bytes.subarray(start, end), ext, textField, maxDocumentTokens);
      results[i] = done.ids;
      onRoad[i] = done.onRoad ? 1 : 0;
    } catch (e) {
      const code = e instanceof WorkerTextError ? e.code : 'tokenizer-failed';
      results[i] = { code, message: reason(e) };
    }
    start = end;
  }
  return { road, onRoad, results };
}
