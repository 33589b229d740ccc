// A Hugging Face tokenizer.json for the generated corpus (text.ts): its `encode(text).ids` are
// `corpusIds(text)` for every corpus document, so the text loader's tokenizer stage and the tiny
// GPT's tests can run a real tokenizer over the corpus and still check ids by the definition.
// A BPE model with no merges over single characters is a character-level tokenizer (this
// version of tokenizers.js has no WordLevel model); BOS and EOS are its special added tokens.
import { CORPUS_ALPHABET, CORPUS_BOS, CORPUS_BOS_TOKEN, CORPUS_EOS, CORPUS_EOS_TOKEN } from './text.ts';

function specialToken(id: number, content: string): object {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
}

/** The corpus' tokenizer.json (a fresh object each call, so callers may change theirs). */
export function corpusTokenizerJson(): object {
  const vocab: Record<string, number> = { [CORPUS_BOS_TOKEN]: CORPUS_BOS, [CORPUS_EOS_TOKEN]: CORPUS_EOS };
  for (const [i, char] of [...CORPUS_ALPHABET].entries()) vocab[char] = i + 2;
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [specialToken(CORPUS_BOS, CORPUS_BOS_TOKEN), specialToken(CORPUS_EOS, CORPUS_EOS_TOKEN)],
    normalizer: null,
    pre_tokenizer: null,
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
}
