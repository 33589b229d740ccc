// The text demo's character-level tokenizer for dropped text: every distinct character of the text
// gets an id (BOS 0, EOS 1, characters from 2, in code point order), written as a Hugging Face
// tokenizer.json (a BPE model with no merges, the shape of corpusTokenizerJson) so the text
// loader's workers run it with @huggingface/tokenizers. Whitespace is split off first (isolated):
// the same ids, but BPE never sees a whole file as one word. The page keeps the same table to turn
// a prompt into ids and a completion back into text.

export const CHAR_BOS = 0;
export const CHAR_EOS = 1;
const BOS_TOKEN = '<|bos|>';
const EOS_TOKEN = '<|eos|>';
/** Distinct characters at most: the GPT's vocabulary (and its embedding table) grows with them. */
export const MAX_CHARACTERS = 1024;

export interface CharTokenizer {
  /** Characters in id order (id = index + 2). */
  chars: string[];
  vocabSize: number;
  json: object;
  /** Ids of `text` (no BOS/EOS); a character outside the table is skipped. */
  encode(text: string): number[];
  /** Text of ids; BOS and EOS read as nothing. */
  decode(ids: readonly number[]): string;
}

function special(id: number, content: string): object {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
}

/** The tokenizer of `texts`' characters; an Error naming the count when there are more than MAX_CHARACTERS. */
export function charTokenizer(texts: readonly string[]): CharTokenizer {
  const seen = new Set<string>();
  for (const text of texts) for (const char of text) seen.add(char);
  if (seen.size > MAX_CHARACTERS)
    throw new Error(`the text has ${seen.size} distinct characters; this demo's character-level model takes at most ${MAX_CHARACTERS}`);
  const chars = [...seen].sort((a, b) => (a.codePointAt(0) ?? 0) - (b.codePointAt(0) ?? 0));
  const idOf = new Map(chars.map((c, i) => [c, i + 2]));
  const vocab: Record<string, number> = { [BOS_TOKEN]: CHAR_BOS, [EOS_TOKEN]: CHAR_EOS };
  for (const [c, id] of idOf) vocab[c] = id;
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [special(CHAR_BOS, BOS_TOKEN), special(CHAR_EOS, EOS_TOKEN)],
    normalizer: null,
    pre_tokenizer: { type: 'Split', pattern: { Regex: '\\s' }, behavior: 'Isolated', invert: false },
    post_processor: null,
    decoder: null,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges: [],
    },
  };
  return {
    chars,
    vocabSize: chars.length + 2,
    json,
    encode(text) {
      const ids: number[] = [];
      for (const char of text) {
        const id = idOf.get(char);
        if (id !== undefined) ids.push(id);
      }
      return ids;
    },
    decode(ids) {
      let text = '';
      for (const id of ids) if (id >= 2) text += chars[id - 2] ?? '\uFFFD';
      return text;
    },
  };
}
