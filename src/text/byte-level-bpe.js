// @ts-check
/**
 * A fast road for the commonest tokenizer.json shapes: a BPE model behind the ByteLevel
 * pre-tokenizer (GPT-2's), or behind a regex Split then ByteLevel (Llama 3's, GPT-4-style), with
 * no normalizer or a Unicode one. It gives the ids tokenizers.js gives (the
 * tests compare both on every document they make), about three times faster, because each
 * pre-tokenized piece of text is looked up in a cache of ids before anything else is done; a miss
 * maps its UTF-8 bytes to GPT-2's byte symbols and merges them by rank, lowest first and leftmost
 * among equals, as tokenizers.js does.
 *
 * Whatever it does not cover it leaves to tokenizers.js: a tokenizer.json of another shape is
 * refused when it is built (`byteLevelBpe` returns undefined), and a document that holds an added
 * token's text, or a piece whose merged symbols are not all in the vocabulary, is refused when it
 * is encoded (`encode` returns undefined). Plain JavaScript, like the worker that runs it.
 */

/** Pieces longer than this (in UTF-16 units) are not cached, as tokenizers.js does not cache them. */
const MAX_CACHED_PIECE = 256;
/** Longer pieces (a run of symbols, a base64 blob, a text not split) merge through a heap: a scan per merge is quadratic. */
const SCANNED_PIECE_BYTES = 64;
/** The cache is emptied when it holds this many pieces: memory stays bounded on any text. */
const CACHE_LIMIT = 200_000;
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

/** @param {unknown} x @returns {x is Record<string, unknown>} */
const isRecord = (x) => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * How the text is cut into pieces: the ByteLevel pre-tokenizer alone (or alone in a Sequence), or
 * a Sequence of a regex Split (isolated matches) then ByteLevel without its own split, the shape of
 * Llama 3's and GPT-4-style tokenizer.json files. That Split's regex is written in the Rust
 * library's dialect; only `splitPattern`, the RegExp tokenizers.js compiled from it, is used.
 * @param {unknown} pre
 * @param {RegExp | undefined} splitPattern
 * @returns {{ addPrefixSpace: boolean, useRegex: boolean, split?: RegExp } | undefined}
 */
function pieceSettings(pre, splitPattern) {
  if (!isRecord(pre)) return undefined;
  if (pre.type === 'ByteLevel') return { addPrefixSpace: pre.add_prefix_space === true, useRegex: pre.use_regex !== false };
  if (pre.type !== 'Sequence' || !Array.isArray(pre.pretokenizers)) return undefined;
  const [first, second, ...rest] = pre.pretokenizers;
  if (second === undefined) return pieceSettings(first, splitPattern);
  const isolated =
    isRecord(first) &&
    first.type === 'Split' &&
    isRecord(first.pattern) &&
    typeof first.pattern.Regex === 'string' &&
    String(first.behavior).toLowerCase() === 'isolated' &&
    first.invert === false;
  // ByteLevel's add_prefix_space would act on every piece there: not covered.
  const plain = isRecord(second) && second.type === 'ByteLevel' && second.use_regex === false && second.add_prefix_space !== true;
  if (rest.length > 0 || !isolated || !plain || splitPattern === undefined) return undefined;
  return { addPrefixSpace: false, useRegex: false, split: splitPattern };
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
 * The fast encoder for this tokenizer.json and tokenizer_config.json, or undefined when either has
 * anything it does not cover. `splitPattern`: for a Split + ByteLevel pre-tokenizer, the RegExp
 * tokenizers.js compiled for the Split (`librarySplitPattern`).
 * @param {unknown} json
 * @param {Record<string, unknown>} [config]
 * @param {RegExp} [splitPattern]
 * @returns {{ encode(text: string): Uint32Array | undefined } | undefined}
 */
export function byteLevelBpe(json, config = {}, splitPattern = undefined) {
  if (!isRecord(json) || !isRecord(json.model)) return undefined;
  const model = json.model;
  const normalizer = json.normalizer ?? null;
  const pre = pieceSettings(json.pre_tokenizer, splitPattern);
  if (model.type !== 'BPE' || !isRecord(model.vocab) || !Array.isArray(model.merges) || pre === undefined) return undefined;
  if (model.dropout || model.continuing_subword_prefix || model.end_of_word_suffix || model.continuing_subword_suffix) return undefined;
  if (normalizer !== null && !(isRecord(normalizer) && UNICODE_FORMS.has(/** @type {string} */ (normalizer.type)))) return undefined;
  if (config.remove_space === true || config.do_lowercase_and_remove_accent === true) return undefined;
  const form = normalizer === null ? undefined : /** @type {string} */ (normalizer.type);

  // Ids as tokenizers.js finds them: the vocabulary, with added tokens' ids over it.
  /** @type {Map<string, number>} */
  const ids = new Map();
  for (const [token, id] of Object.entries(model.vocab)) if (typeof id === 'number') ids.set(token, id);
  /** @type {string[]} */
  const addedTexts = [];
  for (const added of Array.isArray(json.added_tokens) ? json.added_tokens : []) {
    if (!isRecord(added) || typeof added.content !== 'string' || typeof added.id !== 'number') return undefined;
    ids.set(added.content, added.id);
    addedTexts.push(added.content);
    if (form !== undefined && added.normalized === true) addedTexts.push(added.content.normalize(form));
  }
  /** @type {Map<string, number>} left symbol, a space, right symbol → rank (byte symbols hold no space) */
  const ranks = new Map();
  for (const [rank, merge] of model.merges.entries()) {
    const pair = typeof merge === 'string' ? merge.split(' ', 2) : merge;
    if (!Array.isArray(pair) || pair.length !== 2) return undefined;
    const key = `${pair[0]} ${pair[1]}`;
    if (!ranks.has(key)) ranks.set(key, rank);
  }
  const ignoreMerges = model.ignore_merges === true;
  const symbols = byteSymbols();
  const utf8 = new TextEncoder();
  /** @type {Map<string, Uint32Array | null>} null: a piece the vocabulary does not cover */
  const cache = new Map();
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
    if (parts.length > SCANNED_PIECE_BYTES) mergeByHeap(parts, ranks);
    else mergeByScan(parts, ranks);
    const result = new Uint32Array(parts.length);
    for (let i = 0; i < parts.length; i++) {
      const id = ids.get(/** @type {string} */ (parts[i]));
      if (id === undefined) return null;
      result[i] = id;
    }
    return result;
  }

  return {
    encode(text) {
      let normal = form === undefined ? text : text.normalize(form);
      for (const added of addedTexts) if (text.includes(added) || normal.includes(added)) return undefined;
      if (normal.length === 0) return new Uint32Array(0);
      if (pre.addPrefixSpace && !normal.startsWith(' ')) normal = ` ${normal}`;
      let n = 0;
      const pieces = pre.split ? isolatedSplit(normal, pre.split) : pre.useRegex ? gpt2Split(normal) : [normal];
      for (const piece of pieces) {
        let got = cache.get(piece);
        if (got === undefined) {
          got = pieceIds(piece);
          if (piece.length < MAX_CACHED_PIECE) {
            if (cache.size >= CACHE_LIMIT) cache.clear();
            cache.set(piece, got);
          }
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
    },
  };
}

/**
 * Merges `parts` in place, tokenizers.js's order: the adjacent pair of lowest rank first, the
 * leftmost among equals, one merge at a time. A scan per merge: for words, short.
 * @param {string[]} parts
 * @param {Map<string, number>} ranks
 */
function mergeByScan(parts, ranks) {
  for (;;) {
    let best = -1;
    let bestRank = Infinity;
    for (let i = 0; i + 1 < parts.length; i++) {
      const rank = ranks.get(`${parts[i]} ${parts[i + 1]}`);
      if (rank !== undefined && rank < bestRank) {
        bestRank = rank;
        best = i;
      }
    }
    if (best < 0) return;
    parts.splice(best, 2, /** @type {string} */ (parts[best]) + /** @type {string} */ (parts[best + 1]));
  }
}

/**
 * Merges `parts` in place in mergeByScan's order (lowest rank first, leftmost among
 * equals) in O(n log n): a heap of adjacent pairs keyed by (rank, left index), symbols linked left
 * and right, and a version per symbol so that a pair whose side has changed since it was queued is
 * skipped when it comes out.
 * @param {string[]} parts
 * @param {Map<string, number>} ranks
 */
function mergeByHeap(parts, ranks) {
  const n = parts.length;
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  const version = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
  }
  /** @type {[rank: number, left: number, right: number, leftVersion: number, rightVersion: number][]} */
  const heap = [];
  /** @param {number} a @param {number} b */
  const before = (a, b) => {
    const x = /** @type {[number, number]} */ (heap[a]);
    const y = /** @type {[number, number]} */ (heap[b]);
    return x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]);
  };
  /** @param {number} a @param {number} b */
  const swap = (a, b) => {
    const t = /** @type {[number, number, number, number, number]} */ (heap[a]);
    heap[a] = /** @type {[number, number, number, number, number]} */ (heap[b]);
    heap[b] = t;
  };
  /** @param {number} left */
  const push = (left) => {
    const right = next[left] ?? -1;
    if (left < 0 || right < 0) return;
    const rank = ranks.get(`${parts[left]} ${parts[right]}`);
    if (rank === undefined) return;
    heap.push([rank, left, right, version[left] ?? 0, version[right] ?? 0]);
    for (let i = heap.length - 1; i > 0; ) {
      const up = (i - 1) >> 1;
      if (!before(i, up)) break;
      swap(i, up);
      i = up;
    }
  };
  const pop = () => {
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last !== undefined) {
      heap[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(l, m)) m = l;
        if (r < heap.length && before(r, m)) m = r;
        if (m === i) break;
        swap(i, m);
        i = m;
      }
    }
    return top;
  };
  for (let i = 0; i + 1 < n; i++) push(i);
  while (heap.length > 0) {
    const [, left, right, leftVersion, rightVersion] = /** @type {[number, number, number, number, number]} */ (pop());
    if (next[left] !== right || version[left] !== leftVersion || version[right] !== rightVersion) continue;
    parts[left] = /** @type {string} */ (parts[left]) + /** @type {string} */ (parts[right]);
    version[left] = (version[left] ?? 0) + 1;
    version[right] = (version[right] ?? 0) + 1;
    const after = next[right] ?? -1;
    next[left] = after;
    if (after >= 0) prev[after] = left;
    push(prev[left] ?? -1);
    push(left);
  }
  let w = 0;
  for (let i = 0; i >= 0; i = next[i] ?? -1) parts[w++] = /** @type {string} */ (parts[i]);
  parts.length = w;
}
