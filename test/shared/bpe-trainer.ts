// Small BPE trainers, for the tokenizer tests' tokenizer.json files: real ones with merges and
// multi-byte characters (GPT-2's byte-level shape, and Llama 2's SentencePiece shape), so "the same
// ids as the tokenizer run directly" covers more than single characters. Written from the algorithm
// (count adjacent pairs over pre-tokenized words, merge the most frequent, repeat), not tuned:
// the tests compare against tokenizers.js itself, not against this trainer.

/** GPT-2's byte ↔ printable character table: every byte gets one visible code point. */
function byteSymbols(): string[] {
  const printable: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const symbols: string[] = new Array(256);
  let shifted = 0;
  for (let b = 0; b < 256; b++) symbols[b] = String.fromCodePoint(printable.includes(b) ? b : 256 + shifted++);
  return symbols;
}

/** The split tokenizers.js's ByteLevel pre-tokenizer makes (GPT-2's pattern). */
const GPT2_SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/**
 * The merges BPE training learns from `words` (each a list of symbols with its count), up to
 * `mergeCount`: the most frequent adjacent pair merged everywhere, again and again (ties to the
 * pair that sorts first; a pair seen once is never merged).
 */
function learnMerges(words: { parts: string[]; count: number }[], mergeCount: number): [string, string][] {
  const merges: [string, string][] = [];
  while (merges.length < mergeCount) {
    const pairs = new Map<string, number>();
    for (const { parts, count } of words)
      for (let i = 0; i + 1 < parts.length; i++) {
        const pair = `${parts[i]}\u0000${parts[i + 1]}`;
        pairs.set(pair, (pairs.get(pair) ?? 0) + count);
      }
    let best: string | undefined;
    let bestCount = 1;
    for (const [pair, count] of pairs)
      if (count > bestCount || (count === bestCount && best !== undefined && pair < best)) [best, bestCount] = [pair, count];
    if (best === undefined) break;
    const [left, right] = best.split('\u0000') as [string, string];
    merges.push([left, right]);
    for (const word of words) {
      const out: string[] = [];
      for (let i = 0; i < word.parts.length; i++) {
        if (i + 1 < word.parts.length && word.parts[i] === left && word.parts[i + 1] === right) out.push(left + right), i++;
        else out.push(word.parts[i]!);
      }
      word.parts = out;
    }
  }
  return merges;
}

/**
 * A tokenizer.json trained on `texts` with up to `mergeCount` merges: ids 0–255 the byte symbols,
 * then one per merge, then `<|endoftext|>` as a special added token, which the post-processor puts
 * in front of the ids when the caller lets the tokenizer add special tokens.
 */
export function trainByteLevelBpe(texts: readonly string[], mergeCount: number): object {
  const symbols = byteSymbols();
  const utf8 = new TextEncoder();
  const wordCounts = new Map<string, number>();
  for (const text of texts)
    for (const piece of text.match(GPT2_SPLIT) ?? []) {
      const word = Array.from(utf8.encode(piece), (b) => symbols[b]!).join('\u0000');
      wordCounts.set(word, (wordCounts.get(word) ?? 0) + 1);
    }
  const words = [...wordCounts].map(([w, count]) => ({ parts: w.split('\u0000'), count }));
  const merges = learnMerges(words, mergeCount);
  const vocab: Record<string, number> = {};
  for (const [i, s] of symbols.entries()) vocab[s] = i;
  for (const [left, right] of merges) vocab[left + right] ??= Object.keys(vocab).length;
  const endOfText = Object.keys(vocab).length;
  vocab['<|endoftext|>'] = endOfText;
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
      { id: endOfText, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
    ],
    normalizer: { type: 'NFC' },
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    // Adds <|endoftext|> in front when asked to add special tokens: the tokenizer stage must not.
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<|endoftext|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<|endoftext|>': { id: '<|endoftext|>', ids: [endOfText], tokens: ['<|endoftext|>'] } },
    },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges,
    },
  };
}

const MARKER = '\u2581';

/**
 * A SentencePiece-style tokenizer.json trained on `texts` with up to `mergeCount` merges, laid out
 * as Llama 2's: `<unk>`, `<s>`, `</s>`, the 256 byte-fallback tokens `<0x00>`–`<0xFF>`, each code
 * point of the training text, then one token per merge; the normalizer prepends '▁' and writes
 * each space as '▁', and merges join code points, never across a '▁' that follows another
 * character.
 */
export function trainMetaspaceBpe(texts: readonly string[], mergeCount: number): object {
  const wordCounts = new Map<string, number>();
  for (const text of texts)
    for (const word of `${MARKER}${text.replaceAll(' ', MARKER)}`.split(/(?<=[^\u2581])(?=\u2581)/u))
      wordCounts.set(word, (wordCounts.get(word) ?? 0) + 1);
  const words = [...wordCounts].map(([w, count]) => ({ parts: Array.from(w), count }));
  const vocab: Record<string, number> = { '<unk>': 0, '<s>': 1, '</s>': 2 };
  for (let b = 0; b < 256; b++) vocab[`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`] = 3 + b;
  for (const { parts } of words) for (const symbol of parts) vocab[symbol] ??= Object.keys(vocab).length;
  const merges = learnMerges(words, mergeCount);
  for (const [left, right] of merges) vocab[left + right] ??= Object.keys(vocab).length;
  const special = (id: number, content: string) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [special(0, '<unk>'), special(1, '<s>'), special(2, '</s>')],
    normalizer: {
      type: 'Sequence',
      normalizers: [
        { type: 'Prepend', prepend: MARKER },
        { type: 'Replace', pattern: { String: ' ' }, content: MARKER },
      ],
    },
    pre_tokenizer: null,
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } },
    },
    decoder: {
      type: 'Sequence',
      decoders: [
        { type: 'Replace', pattern: { String: MARKER }, content: ' ' },
        { type: 'ByteFallback' },
        { type: 'Fuse' },
        { type: 'Strip', content: ' ', start: 1, stop: 0 },
      ],
    },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: '<unk>',
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: true,
      byte_fallback: true,
      vocab,
      merges,
    },
  };
}
