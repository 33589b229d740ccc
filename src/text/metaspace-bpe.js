// @ts-check
/**
 * A fast road for SentencePiece-style BPE tokenizer.json files: spaces become '▁', symbols are
 * code points merged by rank, and a symbol the vocabulary lacks falls back to its UTF-8 bytes as
 * `<0xNN>` tokens. Llama 2, Mistral and TinyLlama write it as a normalizer (Prepend '▁', Replace
 * ' ' by '▁') with no pre-tokenizer, Gemma 3 as a Replace normalizer and a Split that never cuts
 * (`spaceSettings`); others as a Metaspace pre-tokenizer.
 *
 * tokenizers.js merges such a document as one word (no cache; a priority queue over every code
 * point). This road cuts the normalized text wherever no merge can ever join the two code points
 * on either side: a pair that is never the last code point of a merge's left side followed by the
 * first of its right side (a word and the '▁' after it, a new line, in SentencePiece vocabularies).
 * No merge crosses such a cut, so merging each piece alone gives the same symbols whatever the
 * merges are; each piece's ids are cached. Added tokens written in a document are cut out first,
 * as both libraries do (bpe-shared.js's `encodeSections`); a document holding an added token this
 * road does not cut is left to tokenizers.js (`encode` returns undefined), and a shape this road
 * does not cover is refused (`metaspaceBpe` returns undefined). Plain JavaScript, like the worker that runs it.
 */
import { encodeSections, isRecord, mergeSymbols, PieceCache, readBpe } from './bpe-shared.js';

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
 * The normalizer's last step, when it is a Replace of a string: what no normalized text holds.
 * @param {unknown} spec
 * @returns {string | undefined}
 */
function replacedLast(spec) {
  if (!isRecord(spec)) return undefined;
  if (spec.type === 'Sequence') return Array.isArray(spec.normalizers) ? replacedLast(spec.normalizers.at(-1)) : undefined;
  if (spec.type !== 'Replace' || !isRecord(spec.pattern) || typeof spec.pattern.String !== 'string') return undefined;
  const [from, to] = [spec.pattern.String, spec.content ?? ''];
  return from.length > 0 && typeof to === 'string' && !to.includes(from) ? from : undefined;
}

/**
 * How tokenizers.js's Metaspace pre-tokenizer writes spaces (none: no pre-tokenizer, the
 * normalizer has written them); undefined for another pre-tokenizer. A Split on a string that the
 * normalizer's last step replaces everywhere (Gemma 3's: Replace ' ' by '▁', then Split on ' '
 * merged with the previous piece) never finds it, in the Rust library and in tokenizers.js alike:
 * the whole normalized text is one piece, as with no pre-tokenizer. Any other Split is not covered
 * (tokenizers.js splits MergedWithPrevious as Isolated, so the two libraries would disagree).
 * @param {unknown} pre
 * @param {unknown} normalizer
 * @returns {{ metaspace?: { replacement: string, written: string, prepend: boolean, first: boolean } } | undefined}
 */
function spaceSettings(pre, normalizer) {
  if (pre === null || pre === undefined) return {};
  if (isRecord(pre) && pre.type === 'Split' && pre.invert !== true && isRecord(pre.pattern)) {
    const gone = replacedLast(normalizer);
    return gone !== undefined && pre.pattern.String === gone ? {} : undefined;
  }
  if (!isRecord(pre) || pre.type !== 'Metaspace') return undefined;
  const replacement = pre.replacement ?? '\u2581';
  const written = pre.str_rep || replacement;
  const scheme = pre.prepend_scheme ?? 'always';
  if (typeof replacement !== 'string' || typeof written !== 'string') return undefined;
  if (scheme !== 'always' && scheme !== 'first' && scheme !== 'never') return undefined;
  // 'first' prepends to the first section only; a document this road takes is one section.
  return { metaspace: { replacement, written, prepend: scheme !== 'never', first: scheme === 'first' } };
}

/** One key per pair of code points (below 2^42, exact in a double). */
const pairKey = (/** @type {number} */ left, /** @type {number} */ right) => left * 0x110000 + right;

/**
 * The fast road for SentencePiece-style BPE tokenizer.json files.
 * @typedef {object} MetaspaceBpe
 * @property {(text: string) => Uint32Array | undefined} encode tokenizers.js's ids for `text` (no special tokens added), or undefined for a text left to it.
 */

/**
 * The fast encoder for this tokenizer.json and tokenizer_config.json, or undefined when either has
 * anything it does not cover.
 * @param {unknown} json
 * @param {Record<string, unknown>} [config]
 * @returns {MetaspaceBpe | undefined}
 */
export function metaspaceBpe(json, config = {}) {
  if (!isRecord(json)) return undefined;
  const steps = normalizerSteps(json.normalizer);
  const settings = spaceSettings(json.pre_tokenizer, json.normalizer);
  if (steps === undefined || settings === undefined) return undefined;
  const { metaspace } = settings;
  const normalize = (/** @type {string} */ text) => steps.reduce((t, step) => step(t), text);
  const read = readBpe(json, config, normalize);
  if (read === undefined) return undefined;
  const { model, ids, ranks, holdsNormalizedAdded } = read;
  /** Pairs of code points some merge joins: the last of its left side, the first of its right. */
  const joinable = new Set();
  for (const key of ranks.keys()) {
    const [left = '', right = ''] = key.split(' ');
    const last = Array.from(left).at(-1)?.codePointAt(0);
    const first = right.codePointAt(0);
    if (last === undefined || first === undefined) return undefined;
    joinable.add(pairKey(last, first));
  }
  // tokenizers.js writes the unknown token's text, maps it to an id through the model's
  // vocabulary and fuses unknowns by that id: an unknown token the vocabulary lacks, or an added
  // token of its text with another id, is not covered.
  const unkToken = typeof model.unk_token === 'string' ? model.unk_token : undefined;
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

  /**
   * One section of text (no added token cut out of it): its ids, or undefined to leave the
   * document to tokenizers.js.
   * @param {string} text
   * @returns {Uint32Array | undefined}
   */
  function section(text) {
    if (text.length === 0) return new Uint32Array(0);
    let normal = normalize(text);
    if (holdsNormalizedAdded(normal)) return undefined;
    if (metaspace !== undefined && normal.length > 0) {
      normal = normal.replaceAll(' ', metaspace.written);
      if (metaspace.prepend && !normal.startsWith(metaspace.replacement)) normal = metaspace.written + normal;
    }
    if (normal.length === 0) return new Uint32Array(0);
    if (metaspace !== undefined && holdsNormalizedAdded(normal)) return undefined; // a space written as '▁' can complete one
    const whole = ignoreMerges ? ids.get(normal) : undefined;
    if (whole !== undefined) return Uint32Array.of(whole);
    let n = 0;
    let from = 0;
    let before = /** @type {number} */ (normal.codePointAt(0));
    for (let at = before > 0xffff ? 2 : 1; at <= normal.length; ) {
      const next = at < normal.length ? /** @type {number} */ (normal.codePointAt(at)) : -1;
      if (next >= 0 && joinable.has(pairKey(before, next))) {
        before = next;
        at += next > 0xffff ? 2 : 1;
        continue;
      }
      const piece = normal.slice(from, at);
      let got = cache.get(piece);
      if (got === undefined) {
        got = pieceIds(piece);
        cache.set(piece, got);
      }
      n = append(got, n);
      if (next < 0) break;
      from = at;
      before = next;
      at += next > 0xffff ? 2 : 1;
    }
    return out.slice(0, n);
  }

  // Metaspace's 'first' scheme writes '▁' before the first section only; which section counts as
  // first around added tokens is not modelled here, so a document holding one stays on tokenizers.js.
  return { encode: encodeSections(read, section, metaspace?.first !== true) };
}
