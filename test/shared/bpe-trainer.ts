// A small byte-level BPE trainer, for the tokenizer tests' second tokenizer.json: a real one with
// merges, GPT-2's byte-level pre-tokenizer and multi-byte characters, so "the same ids as the
// tokenizer run directly" covers more than single characters. Written from the algorithm
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
