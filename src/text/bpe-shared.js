// @ts-check
/**
 * What the fast BPE roads (byte-level-bpe.js, metaspace-bpe.js) share: the merge ranks read from a
 * tokenizer.json, merging a piece's symbols in tokenizers.js's order, the cache of ids per piece,
 * the search for added tokens' texts, and which post-processors leave their tokens alone. Plain
 * JavaScript, like the worker that runs them.
 */

/** Pieces this long (in UTF-16 units) or longer are not cached, as tokenizers.js does not cache them. */
const MAX_CACHED_PIECE = 256;
/** A cache is emptied when it holds this many pieces… */
const CACHE_PIECES = 200_000;
/** …or this many UTF-16 units of them (where a shape leaves whole short documents as pieces). */
const CACHE_UNITS = 4_000_000;
/** Longer pieces (a run of symbols, a base64 blob, a text not split) merge through a heap: a scan per merge is quadratic. */
const SCANNED_PIECE_SYMBOLS = 64;

/**
 * Each piece's ids, kept for the next time the piece comes: bounded in pieces and in their length,
 * so memory stays bounded on any text, and emptied when full (common pieces come back at once).
 * @template T
 */
export class PieceCache {
  /** @type {Map<string, T>} */
  #ids = new Map();
  #units = 0;

  /** @param {string} piece */
  get(piece) {
    return this.#ids.get(piece);
  }

  /** @param {string} piece @param {T} ids */
  set(piece, ids) {
    if (piece.length >= MAX_CACHED_PIECE) return;
    if (this.#ids.size >= CACHE_PIECES || this.#units + piece.length > CACHE_UNITS) {
      this.#ids.clear();
      this.#units = 0;
    }
    this.#ids.set(piece, ids);
    this.#units += piece.length;
  }
}

/**
 * A test of whether a text holds any of `needles` (added tokens' texts), which runs on every
 * document: the needles are grouped by their first character, and a group is searched only in a
 * text holding that character (Llama 3's 256 added tokens all start with '<', so most documents
 * cost one search). An empty needle never matches, as tokenizers.js never splits on one.
 * @param {readonly string[]} needles
 * @returns {(text: string) => boolean}
 */
function holdsAnyOf(needles) {
  /** @type {Map<string, string[]>} */
  const byFirst = new Map();
  for (const needle of needles) {
    if (needle.length === 0) continue;
    const group = byFirst.get(needle.charAt(0));
    if (group === undefined) byFirst.set(needle.charAt(0), [needle]);
    else group.push(needle);
  }
  const groups = [...byFirst];
  return (text) => {
    for (const [first, group] of groups) if (text.includes(first) && group.some((needle) => text.includes(needle))) return true;
    return false;
  };
}

/** @param {unknown} x @returns {x is Record<string, unknown>} */
export const isRecord = (x) => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * The cut of a text at added tokens' texts that the Rust library and tokenizers.js both make
 * before normalizing: at the leftmost position where one starts, the longest that starts there
 * (aho-corasick's LeftmostLongest in the Rust library, a trie in tokenizers.js), in UTF-16 units.
 * Gives the text between them as strings and each added token as its id.
 * @param {readonly { content: string, id: number }[]} tokens
 * @returns {(text: string) => (string | number)[]}
 */
function addedTokenSplitter(tokens) {
  /** @typedef {{ next: Map<string, TrieNode>, id: number, length: number }} TrieNode */
  /** @type {TrieNode} */
  const root = { next: new Map(), id: -1, length: 0 };
  for (const { content, id } of tokens) {
    if (content.length === 0) continue;
    let node = root;
    for (const unit of content.split('')) {
      let child = node.next.get(unit);
      if (child === undefined) {
        child = { next: new Map(), id: -1, length: 0 };
        node.next.set(unit, child);
      }
      node = child;
    }
    node.id = id;
    node.length = content.length;
  }
  return (text) => {
    /** @type {(string | number)[]} */
    const parts = [];
    let from = 0;
    for (let i = 0; i < text.length; ) {
      let node = root.next.get(text.charAt(i));
      let id = -1;
      let length = 0;
      for (let j = i + 1; node !== undefined; j++) {
        if (node.id >= 0) [id, length] = [node.id, node.length];
        node = j < text.length ? node.next.get(text.charAt(j)) : undefined;
      }
      if (id < 0) {
        i++;
        continue;
      }
      if (from < i) parts.push(text.slice(from, i));
      parts.push(id);
      i += length;
      from = i;
    }
    if (from < text.length) parts.push(text.slice(from));
    return parts;
  };
}

/**
 * What both roads read alike from a tokenizer.json and tokenizer_config.json, or undefined where
 * either has what neither road covers (another model, dropout, subword affixes, a post-processor
 * that changes a text's tokens, a config that removes spaces or accents, a malformed merge or added
 * token): the model, the ids as tokenizers.js finds them (the vocabulary, with added tokens' ids
 * over it), the merge ranks, a test for a text holding any added token's text (a normalized added
 * token's by its `normalize`d text as well), and the cut at added tokens (`splitAdded`).
 *
 * Added tokens that are matched in the text as written (`normalized: false`, no lstrip, rstrip or
 * single_word: every added token of Llama 2, Llama 3, Gemma 3, GPT-4o and Qwen 3) are cut out
 * before normalizing, as both libraries do, and the text between them is encoded section by
 * section; `splitAdded` gives undefined for a text holding any other added token's text (matched
 * after normalizing, or eating spaces beside it), which is left to tokenizers.js.
 * @param {Record<string, unknown>} json
 * @param {Record<string, unknown>} config
 * @param {(text: string) => string} normalize
 * @returns {{ model: Record<string, unknown> & { vocab: Record<string, unknown> }, ids: Map<string, number>, ranks: Map<string, number>, holdsAdded: (text: string) => boolean, holdsNormalizedAdded: (text: string) => boolean, splitAdded: (text: string) => (string | number)[] | undefined } | undefined}
 */
export function readBpe(json, config, normalize) {
  const model = json.model;
  if (!isRecord(model) || model.type !== 'BPE' || !isRecord(model.vocab) || !Array.isArray(model.merges)) return undefined;
  if (!passesTokensThrough(json.post_processor)) return undefined;
  if (model.dropout || model.continuing_subword_prefix || model.end_of_word_suffix || model.continuing_subword_suffix) return undefined;
  if (config.remove_space === true || config.do_lowercase_and_remove_accent === true) return undefined;
  /** @type {Map<string, number>} */
  const ids = new Map();
  for (const [token, id] of Object.entries(model.vocab)) if (typeof id === 'number') ids.set(token, id);
  /** @type {string[]} */
  const addedTexts = [];
  /** Added tokens' texts a text is cut at before normalizing. */
  /** @type {{ content: string, id: number }[]} */
  const cut = [];
  /** Added tokens' texts (as written and normalized) that leave a text holding one to tokenizers.js. */
  /** @type {string[]} */
  const uncut = [];
  /** @type {string[]} */
  const normalizedTexts = [];
  for (const added of Array.isArray(json.added_tokens) ? json.added_tokens : []) {
    if (!isRecord(added) || typeof added.content !== 'string' || typeof added.id !== 'number') return undefined;
    ids.set(added.content, added.id);
    addedTexts.push(added.content);
    if (added.normalized === true) {
      addedTexts.push(normalize(added.content));
      normalizedTexts.push(normalize(added.content));
    }
    if (added.normalized === true || added.lstrip === true || added.rstrip === true || added.single_word === true)
      uncut.push(added.content, ...(added.normalized === true ? [normalize(added.content)] : []));
    else cut.push({ content: added.content, id: added.id });
  }
  const ranks = mergeRanks(model.merges);
  if (ranks === undefined) return undefined;
  const split = addedTokenSplitter(cut);
  const holdsUncut = holdsAnyOf(uncut);
  return {
    model: /** @type {Record<string, unknown> & { vocab: Record<string, unknown> }} */ (model),
    ids,
    ranks,
    holdsAdded: holdsAnyOf(addedTexts),
    holdsNormalizedAdded: holdsAnyOf(normalizedTexts),
    splitAdded: (text) => (holdsUncut(text) ? undefined : split(text)),
  };
}

/**
 * An encoder that cuts a text at added tokens (`splitAdded`) and encodes each section between
 * them with `section`, as both libraries do; undefined when the text is left to tokenizers.js (a
 * section refused, or an added token not cut out). A text holding no added token's text is one
 * section, the common case, with no cut looked for.
 * @param {{ holdsAdded: (text: string) => boolean, splitAdded: (text: string) => (string | number)[] | undefined }} read
 * @param {(text: string) => Uint32Array | undefined} section
 * @param {boolean} cuts false: a text holding an added token's text is left to tokenizers.js
 * @returns {(text: string) => Uint32Array | undefined}
 */
export function encodeSections(read, section, cuts) {
  return (text) => {
    if (!read.holdsAdded(text)) return section(text);
    const parts = cuts ? read.splitAdded(text) : undefined;
    if (parts === undefined) return undefined;
    /** @type {Uint32Array[]} */
    const done = [];
    let total = 0;
    for (const part of parts) {
      const got = typeof part === 'number' ? Uint32Array.of(part) : section(part);
      if (got === undefined) return undefined;
      done.push(got);
      total += got.length;
    }
    const out = new Uint32Array(total);
    let at = 0;
    for (const got of done) {
      out.set(got, at);
      at += got.length;
    }
    return out;
  };
}

/**
 * Whether tokenizers.js's post-processor of this spec hands a single text's tokens back unchanged
 * when no special tokens are added, which the roads assume (a template naming the second text, or
 * its first twice, would not).
 * @param {unknown} spec
 * @returns {boolean}
 */
function passesTokensThrough(spec) {
  if (spec === null || spec === undefined) return true;
  if (!isRecord(spec)) return false;
  if (spec.type === 'ByteLevel' || spec.type === 'BertProcessing' || spec.type === 'RobertaProcessing') return true;
  if (spec.type === 'Sequence') return Array.isArray(spec.processors) && spec.processors.every(passesTokensThrough);
  if (spec.type !== 'TemplateProcessing' || !Array.isArray(spec.single)) return false;
  const texts = spec.single.filter((item) => isRecord(item) && 'Sequence' in item);
  const specials = spec.single.filter((item) => isRecord(item) && 'SpecialToken' in item);
  return (
    texts.length === 1 &&
    isRecord(texts[0].Sequence) &&
    texts[0].Sequence.id === 'A' &&
    texts.length + specials.length === spec.single.length
  );
}

/**
 * The merges' ranks keyed by left symbol, a space, right symbol (the last of duplicates wins, as in
 * Hugging Face's tokenizers and tokenizers.js, whose maps are built in order); undefined when a merge
 * is malformed or a side holds a space, which would make two pairs share a key.
 * @param {unknown[]} merges
 * @returns {Map<string, number> | undefined}
 */
function mergeRanks(merges) {
  /** @type {Map<string, number>} */
  const ranks = new Map();
  for (const [rank, merge] of merges.entries()) {
    const pair = typeof merge === 'string' ? merge.split(' ', 2) : merge;
    if (!Array.isArray(pair) || pair.length !== 2) return undefined;
    const [left, right] = pair;
    if (typeof left !== 'string' || typeof right !== 'string' || left.includes(' ') || right.includes(' ')) return undefined;
    const key = `${left} ${right}`;
    ranks.set(key, rank);
  }
  return ranks;
}

/**
 * Merges `parts` in place, tokenizers.js's order: the adjacent pair of lowest rank first, the
 * leftmost among equals.
 * @param {string[]} parts
 * @param {Map<string, number>} ranks
 */
export function mergeSymbols(parts, ranks) {
  if (parts.length > SCANNED_PIECE_SYMBOLS) mergeByHeap(parts, ranks);
  else mergeByScan(parts, ranks);
}

/**
 * mergeSymbols by a scan per merge: for words, short.
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
  /** @param {number} i */
  const entry = (i) => {
    const e = heap[i];
    if (e === undefined) throw new RangeError(`BPE merge heap has no entry ${i} (of ${heap.length})`);
    return e;
  };
  /** @param {number} a @param {number} b */
  const before = (a, b) => {
    const x = entry(a);
    const y = entry(b);
    return x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]);
  };
  /** @param {number} a @param {number} b */
  const swap = (a, b) => {
    const t = entry(a);
    heap[a] = entry(b);
    heap[b] = t;
  };
  /** @param {number} i */
  const part = (i) => {
    const p = parts[i];
    if (p === undefined) throw new RangeError(`BPE merge has no part ${i} (of ${parts.length})`);
    return p;
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
    const top = entry(0);
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
    const [, left, right, leftVersion, rightVersion] = pop();
    if (next[left] !== right || version[left] !== leftVersion || version[right] !== rightVersion) continue;
    parts[left] = part(left) + part(right);
    version[left] = (version[left] ?? 0) + 1;
    version[right] = (version[right] ?? 0) + 1;
    const after = next[right] ?? -1;
    next[left] = after;
    if (after >= 0) prev[after] = left;
    push(prev[left] ?? -1);
    push(left);
  }
  let w = 0;
  for (let i = 0; i >= 0; i = next[i] ?? -1) parts[w++] = part(i);
  parts.length = w;
}
