// @ts-check
/**
 * A fast road for the commonest tokenizer.json shapes: a BPE model behind the ByteLevel
 * pre-tokenizer (GPT-2's), or behind a regex Split then ByteLevel (Llama 3's, Qwen's, GPT-4o's), with
 * no normalizer or a Unicode one. It gives the ids tokenizers.js gives (the
 * tests compare both on every document they make), about three times faster, because each
 * pre-tokenized piece of text is looked up in a cache of ids before anything else is done; a miss
 * maps its UTF-8 bytes to GPT-2's byte symbols and merges them by rank, lowest first and leftmost
 * among equals, as tokenizers.js does.
 *
 * Added tokens written in a document are cut out first and the text between them encoded section
 * by section (bpe-shared.js's `encodeSections`). Whatever it does not cover it leaves to
 * tokenizers.js: a tokenizer.json of another shape is refused when it is built (`byteLevelBpe`
 * returns undefined), and a document that holds an added token's text matched after normalizing,
 * or a piece whose merged symbols are not all in the vocabulary, is refused when it is encoded
 * (`encode` returns undefined). Plain JavaScript, like the worker that runs it.
 */

import { encodeSections, isRecord, mergeSymbols, PieceCache, readBpe } from './bpe-shared.js';

/** GPT-2's pre-tokenizer split, as tokenizers.js's ByteLevel pre-tokenizer writes it. */
const GPT2_SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
const UNICODE_FORMS = new Set(['NFC', 'NFD', 'NFKC', 'NFKD']);

/**
 * GPT-2's pre-tokenizer pieces.
 * @param {string} text
 */
function* gpt2Split(text) {
  for (const match of text.matchAll(GPT2_SPLIT)) yield match[0];
}

/** GPT-2's table from a byte to the printable character that stands for it. */
function byteSymbols() {
  /** @type {string[]} */
  const symbols = new Array(256);
  let shifted = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    symbols[b] = String.fromCharCode(printable ? b : 256 + shifted++);
  }
  return symbols;
}

/**
 * How the text is cut into pieces: the ByteLevel pre-tokenizer alone (or alone in a Sequence), or
 * a Sequence of a regex Split (isolated matches, or inverted with the gaps removed) then ByteLevel
 * without its own split, the shape of Llama 3's, Qwen's and GPT-4o's tokenizer.json files. That Split's regex is written in the Rust
 * library's dialect; only `splitPattern`, the RegExp tokenizers.js compiled from it, is used.
 * @param {unknown} pre
 * @param {RegExp | undefined} splitPattern
 * @returns {{ addPrefixSpace: boolean, useRegex: boolean, split?: RegExp, gaps?: boolean } | undefined}
 */
function pieceSettings(pre, splitPattern) {
  if (!isRecord(pre)) return undefined;
  if (pre.type === 'ByteLevel') return { addPrefixSpace: pre.add_prefix_space === true, useRegex: pre.use_regex !== false };
  if (pre.type !== 'Sequence' || !Array.isArray(pre.pretokenizers)) return undefined;
  const [first, second, ...rest] = pre.pretokenizers;
  if (second === undefined) return pieceSettings(first, splitPattern);
  const regexSplit = isRecord(first) && first.type === 'Split' && isRecord(first.pattern) && typeof first.pattern.Regex === 'string';
  const behavior = regexSplit ? String(first.behavior).toLowerCase() : '';
  // Isolated: each match and each gap between matches is a piece (Llama 3's, Qwen's). Removed and
  // inverted: the pattern names what to keep, so only the matches are pieces and the gaps are
  // dropped (GPT-4o's o200k; its pattern matches every character, so no text is dropped there,
  // but the Rust library and tokenizers.js drop gaps, and so does this road).
  const isolated = regexSplit && behavior === 'isolated' && first.invert === false;
  const keptMatches = regexSplit && behavior === 'removed' && first.invert === true;
  // ByteLevel's add_prefix_space would act on every piece there: not covered.
  const plain = isRecord(second) && second.type === 'ByteLevel' && second.use_regex === false && second.add_prefix_space !== true;
  if (rest.length > 0 || !(isolated || keptMatches) || !plain || splitPattern === undefined) return undefined;
  return { addPrefixSpace: false, useRegex: false, split: splitPattern, gaps: isolated };
}

/**
 * The pieces tokenizers.js's isolated Split makes: each match, and the text between matches.
 * @param {string} text
 * @param {RegExp} pattern
 */
function* isolatedSplit(text, pattern) {
  let from = 0;
  for (const match of text.matchAll(pattern)) {
    const at = match.index ?? 0;
    if (from < at) yield text.slice(from, at);
    if (match[0].length > 0) yield match[0];
    from = at + match[0].length;
  }
  if (from < text.length) yield text.slice(from);
}

/**
 * The pieces a Split with behavior Removed and `invert: true` makes: each non-empty match; the
 * text between matches is dropped.
 * @param {string} text
 * @param {RegExp} pattern
 */
function* matchesOnly(text, pattern) {
  for (const match of text.matchAll(pattern)) if (match[0].length > 0) yield match[0];
}

/**
 * The RegExp a tokenizers.js instance compiled for its Split pre-tokenizer (the first of a
 * Sequence), read from its fields; undefined where they are not as expected, and then a
 * tokenizer.json of that shape stays on tokenizers.js.
 * @param {unknown} tokenizer
 * @returns {RegExp | undefined}
 */
export function librarySplitPattern(tokenizer) {
  // tokenizers.js's pre-tokenizers are callable objects: functions with fields.
  /** @param {unknown} x @returns {Record<string, unknown> | undefined} */
  const fields = (x) =>
    (typeof x === 'object' || typeof x === 'function') && x !== null ? /** @type {Record<string, unknown>} */ (x) : undefined;
  const pre = fields(fields(tokenizer)?.pre_tokenizer);
  const first = Array.isArray(pre?.tokenizers) ? pre.tokenizers[0] : undefined;
  const pattern = fields(first)?.pattern;
  return pattern instanceof RegExp && pattern.global ? pattern : undefined;
}

/**
 * The fast road for byte-level BPE tokenizer.json files.
 * @typedef {object} ByteLevelBpe
 * @property {(text: string) => Uint32Array | undefined} encode tokenizers.js's ids for `text` (no special tokens added), or undefined for a text left to it.
 */

/**
 * The fast encoder for this tokenizer.json and tokenizer_config.json, or undefined when either has
 * anything it does not cover. `splitPattern`: for a Split + ByteLevel pre-tokenizer, the RegExp
 * tokenizers.js compiled for the Split (`librarySplitPattern`).
 * @param {unknown} json
 * @param {Record<string, unknown>} [config]
 * @param {RegExp} [splitPattern]
 * @returns {ByteLevelBpe | undefined}
 */
export function byteLevelBpe(json, config = {}, splitPattern = undefined) {
  if (!isRecord(json)) return undefined;
  const normalizer = json.normalizer ?? null;
  const settings = pieceSettings(json.pre_tokenizer, splitPattern);
  if (settings === undefined) return undefined;
  const pre = settings; // a const of the narrowed type, which the section function below keeps
  if (normalizer !== null && !(isRecord(normalizer) && UNICODE_FORMS.has(/** @type {string} */ (normalizer.type)))) return undefined;
  const form = normalizer === null ? undefined : /** @type {string} */ (normalizer.type);
  const read = readBpe(json, config, (text) => (form === undefined ? text : text.normalize(form)));
  if (read === undefined) return undefined;
  const { model, ids, ranks, holdsNormalizedAdded } = read;
  const ignoreMerges = model.ignore_merges === true;
  const symbols = byteSymbols();
  const utf8 = new TextEncoder();
  /** @type {PieceCache<Uint32Array | null>} null: a piece the vocabulary does not cover */
  const cache = new PieceCache();
  let out = new Uint32Array(1024);

  /**
   * One piece's ids, or null when a merged symbol is not in the vocabulary.
   * @param {string} piece
   * @returns {Uint32Array | null}
   */
  function pieceIds(piece) {
    const bytes = utf8.encode(piece);
    /** @type {string[]} */
    const parts = [];
    for (let i = 0; i < bytes.length; i++) parts.push(/** @type {string} */ (symbols[/** @type {number} */ (bytes[i])]));
    const whole = ignoreMerges ? ids.get(parts.join('')) : undefined;
    if (whole !== undefined) return Uint32Array.of(whole);
    mergeSymbols(parts, ranks);
    const result = new Uint32Array(parts.length);
    for (let i = 0; i < parts.length; i++) {
      const id = ids.get(/** @type {string} */ (parts[i]));
      if (id === undefined) return null;
      result[i] = id;
    }
    return result;
  }

  /**
   * One section of text (no added token cut out of it): its ids, or undefined to leave the
   * document to tokenizers.js.
   * @param {string} text
   * @returns {Uint32Array | undefined}
   */
  function section(text) {
    let normal = form === undefined ? text : text.normalize(form);
    if (holdsNormalizedAdded(normal)) return undefined;
    if (normal.length === 0) return new Uint32Array(0);
    if (pre.addPrefixSpace && !normal.startsWith(' ')) normal = ` ${normal}`;
    let n = 0;
    const pieces = pre.split
      ? pre.gaps
        ? isolatedSplit(normal, pre.split)
        : matchesOnly(normal, pre.split)
      : pre.useRegex
        ? gpt2Split(normal)
        : [normal];
    for (const piece of pieces) {
      let got = cache.get(piece);
      if (got === undefined) {
        got = pieceIds(piece);
        cache.set(piece, got);
      }
      if (got === null) return undefined;
      if (n + got.length > out.length) {
        const grown = new Uint32Array(Math.max(out.length * 2, n + got.length));
        grown.set(out.subarray(0, n));
        out = grown;
      }
      out.set(got, n);
      n += got.length;
    }
    return out.slice(0, n);
  }

  return { encode: encodeSections(read, section, true) };
}
