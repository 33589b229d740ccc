// @ts-check
/**
 * A fast road for SentencePiece-style BPE tokenizer.json files: spaces become a marker ('▁'),
 * symbols are code points merged by rank, and a symbol the vocabulary lacks falls back to its
 * UTF-8 bytes as `<0xNN>` tokens. Llama 2, Mistral and TinyLlama write it as a normalizer (Prepend
 * '▁', Replace ' ' by '▁') with no pre-tokenizer; others as a Metaspace pre-tokenizer.
 *
 * tokenizers.js merges such a document as one word (no cache; a priority queue over every code
 * point). This road cuts the normalized text before each marker that follows another character
 * and looks each piece up in a cache of ids first. That gives the same ids when no merge joins a
 * symbol ending in another character to one starting with the marker: checked when the road is
 * built, and a tokenizer.json where such a merge exists is refused (`metaspaceBpe` returns
 * undefined). A document holding an added token's text is left to tokenizers.js (`encode` returns
 * undefined). Plain JavaScript, like the worker that runs it.
 */
import { isRecord, mergeRanks, mergeSymbols, PieceCache, passesTokensThrough } from './bpe-shared.js';

const UNICODE_FORMS = new Set(['NFC', 'NFD', 'NFKC', 'NFKD']);

/**
 * The normalizer as string functions applied in order, as tokenizers.js applies them; undefined
 * for a kind not covered (a Replace by regex or with `$` in its content, which replaceAll reads
 * as a pattern, among others).
 * @param {unknown} spec
 * @returns {((text: string) => string)[] | undefined}
 */
function normalizerSteps(spec) {
  if (spec === null || spec === undefined) return [];
  if (!isRecord(spec)) return undefined;
  const type = spec.type;
  if (typeof type === 'string' && UNICODE_FORMS.has(type)) return [(text) => text.normalize(/** @type {string} */ (type))];
  if (type === 'Prepend' && typeof spec.prepend === 'string') {
    const prefix = spec.prepend;
    return [(text) => prefix + text];
  }
  if (type === 'Replace' && isRecord(spec.pattern) && typeof spec.pattern.String === 'string') {
    const [from, to] = [spec.pattern.String, spec.content ?? ''];
    if (from.length === 0 || typeof to !== 'string' || to.includes('$')) return undefined;
    return [(text) => text.replaceAll(from, to)];
  }
  if (type === 'Sequence' && Array.isArray(spec.normalizers)) {
    /** @type {((text: string) => string)[]} */
    const steps = [];
    for (const inner of spec.normalizers) {
      const more = normalizerSteps(inner);
      if (more === undefined) return undefined;
      steps.push(...more);
    }
    return steps;
  }
  return undefined;
}

/**
 * The marker and how tokenizers.js's Metaspace pre-tokenizer writes it (or none: the normalizer
 * has written the markers already); undefined for another pre-tokenizer.
 * @param {unknown} pre
 * @returns {{ marker: string, metaspace?: { replacement: string, written: string, prepend: boolean } } | undefined}
 */
function markerSettings(pre) {
  if (pre === null || pre === undefined) return { marker: '▁' };
  if (!isRecord(pre) || pre.type !== 'Metaspace') return undefined;
  const replacement = pre.replacement ?? '▁';
  const written = pre.str_rep || replacement;
  const scheme = pre.prepend_scheme ?? 'always';
  if (typeof replacement !== 'string' || typeof written !== 'string' || [...written].length !== 1) return undefined;
  if (scheme !== 'always' && scheme !== 'first' && scheme !== 'never') return undefined;
  // 'first' prepends to the first section only; a document this road takes is one section.
  return { marker: written, metaspace: { replacement, written, prepend: scheme !== 'never' } };
}

/**
 * The fast encoder for this tokenizer.json and tokenizer_config.json, or undefined when either has
 * anything it does not cover.
 * @param {unknown} json
 * @param {Record<string, unknown>} [config]
 * @returns {{ encode(text: string): Uint32Array | undefined } | undefined}
 */
export function metaspaceBpe(json, config = {}) {
  if (!isRecord(json) || !isRecord(json.model)) return undefined;
  const model = json.model;
  const steps = normalizerSteps(json.normalizer);
  const settings = markerSettings(json.pre_tokenizer);
  if (model.type !== 'BPE' || !isRecord(model.vocab) || !Array.isArray(model.merges) || steps === undefined || settings === undefined)
    return undefined;
  if (!passesTokensThrough(json.post_processor)) return undefined;
  if (model.dropout || model.continuing_subword_prefix || model.end_of_word_suffix || model.continuing_subword_suffix) return undefined;
  if (config.remove_space === true || config.do_lowercase_and_remove_accent === true) return undefined;
  const { marker, metaspace } = settings;
  const normalize = (/** @type {string} */ text) => steps.reduce((t, step) => step(t), text);

  // Ids as tokenizers.js finds them: the vocabulary, with added tokens' ids over it.
  /** @type {Map<string, number>} */
  const ids = new Map();
  for (const [token, id] of Object.entries(model.vocab)) if (typeof id === 'number') ids.set(token, id);
  /** @type {string[]} */
  const addedTexts = [];
  for (const added of Array.isArray(json.added_tokens) ? json.added_tokens : []) {
    if (!isRecord(added) || typeof added.content !== 'string' || typeof added.id !== 'number') return undefined;
    // tokenizers.js maps a normalized added token's normalized text to it, but not in its model.
    if (added.normalized === true && normalize(added.content) !== added.content) return undefined;
    ids.set(added.content, added.id);
    addedTexts.push(added.content);
  }
  const ranks = mergeRanks(model.merges);
  if (ranks === undefined) return undefined;
  for (const key of ranks.keys()) {
    const [left = '', right = ''] = key.split(' ');
    if (right.startsWith(marker) && !left.endsWith(marker)) return undefined; // a merge across a cut
  }
  // tokenizers.js writes the unknown token's text and maps it to an id through the model's
  // vocabulary; one that is not there gives no id at all: not covered.
  const unkToken = typeof model.unk_token === 'string' ? model.unk_token : undefined;
  // (Nor is an added token of its text with another id: the model's fusing would then miss it.)
  if (model.unk_token != null && (unkToken === undefined || typeof model.vocab[unkToken] !== 'number')) return undefined;
  const unkId = unkToken === undefined ? -1 : /** @type {number} */ (ids.get(unkToken));
  if (unkToken !== undefined && unkId !== model.vocab[unkToken]) return undefined;
  const fuseUnk = model.fuse_unk === true && unkId >= 0;
  const byteFallback = model.byte_fallback === true;
  const ignoreMerges = model.ignore_merges === true;
  /** The id of each byte's `<0xNN>` token, -1 where the vocabulary lacks it. */
  const byteIds = Int32Array.from({ length: 256 }, (_, b) => ids.get(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`) ?? -1);
  const utf8 = new TextEncoder();
  /** @type {PieceCache<Uint32Array>} */
  const cache = new PieceCache();
  /** @type {number[]} */
  const pieceOut = [];
  let out = new Uint32Array(1024);

  /**
   * A merged symbol the vocabulary lacks: its bytes' tokens when it has them all, else the
   * unknown token, else nothing (tokenizers.js drops it).
   * @param {string} symbol
   */
  function unknownSymbol(symbol) {
    if (byteFallback) {
      const bytes = utf8.encode(symbol);
      let all = true;
      for (const b of bytes) all &&= (byteIds[b] ?? -1) >= 0;
      if (all) {
        for (const b of bytes) pieceOut.push(/** @type {number} */ (byteIds[b]));
        return;
      }
    }
    if (unkId >= 0) pieceOut.push(unkId);
  }

  /** @param {string} piece */
  function pieceIds(piece) {
    const parts = Array.from(piece);
    mergeSymbols(parts, ranks);
    pieceOut.length = 0;
    for (const symbol of parts) {
      const id = ids.get(symbol);
      if (id === undefined) unknownSymbol(symbol);
      else pieceOut.push(id);
    }
    return Uint32Array.from(pieceOut);
  }

  /** @param {Uint32Array} got @param {number} n */
  function append(got, n) {
    if (n + got.length > out.length) {
      const grown = new Uint32Array(Math.max(out.length * 2, n + got.length));
      grown.set(out.subarray(0, n));
      out = grown;
    }
    for (const id of got) if (!(fuseUnk && id === unkId && n > 0 && out[n - 1] === unkId)) out[n++] = id;
    return n;
  }

  return {
    encode(text) {
      if (text.length === 0) return new Uint32Array(0);
      for (const added of addedTexts) if (text.includes(added)) return undefined;
      let normal = normalize(text);
      for (const added of addedTexts) if (normal.includes(added)) return undefined;
      if (metaspace !== undefined && normal.length > 0) {
        normal = normal.replaceAll(' ', metaspace.written);
        if (metaspace.prepend && !normal.startsWith(metaspace.replacement)) normal = metaspace.written + normal;
      }
      if (normal.length === 0) return new Uint32Array(0);
      const whole = ignoreMerges ? ids.get(normal) : undefined;
      if (whole !== undefined) return Uint32Array.of(whole);
      let n = 0;
      for (let from = 0; from < normal.length; ) {
        // The next marker that follows another character: a run of markers stays with the word after it.
        let to = normal.indexOf(marker, from + 1);
        while (to > 0 && normal.startsWith(marker, to - marker.length)) to = normal.indexOf(marker, to + marker.length);
        if (to < 0) to = normal.length;
        const piece = normal.slice(from, to);
        let got = cache.get(piece);
        if (got === undefined) {
          got = pieceIds(piece);
          cache.set(piece, got);
        }
        n = append(got, n);
        from = to;
      }
      return out.slice(0, n);
    },
  };
}
