// The text demo's character-level tokenizer.json (demo/text-tokenizer.ts): run by tokenizers.js it
// gives one id per character by the table's definition (BOS 0, EOS 1, characters from 2 in code
// point order), the page's own encode/decode agree with it, and too many characters are refused.
import { Tokenizer } from '@huggingface/tokenizers';
import { expect, it } from 'vitest';
import { CHAR_BOS, CHAR_EOS, charTokenizer, MAX_CHARACTERS } from '../../demo/text-tokenizer.ts';

const TEXTS = ['The cat sat.\nOn the  mat!\n\n', 'naïve café — 東京 🙂\ttabs\r\nend', ''];

it('tokenizers.js runs the demo tokenizer.json to one id per character, the ids of its table', () => {
  const t = charTokenizer(TEXTS);
  const chars = [...new Set(TEXTS.join(''))].sort((a, b) => (a.codePointAt(0) ?? 0) - (b.codePointAt(0) ?? 0));
  expect(t.chars).toEqual(chars);
  expect(t.vocabSize).toBe(chars.length + 2);
  const hf = new Tokenizer(t.json as ConstructorParameters<typeof Tokenizer>[0], {});
  for (const text of TEXTS) {
    const want = [...text].map((c) => chars.indexOf(c) + 2);
    expect(hf.encode(text, { add_special_tokens: false }).ids).toEqual(want);
    expect(t.encode(text)).toEqual(want);
    expect(t.decode([CHAR_BOS, ...want, CHAR_EOS])).toBe(text);
  }
  // A prompt's characters outside the table are left out, not mapped to another id.
  expect(t.encode('cat§')).toEqual(t.encode('cat'));
});

it('more distinct characters than the model takes is an error naming the count', () => {
  const text = Array.from({ length: MAX_CHARACTERS + 1 }, (_, i) => String.fromCodePoint(0x4e00 + i)).join('');
  expect(() => charTokenizer([text])).toThrow(`${MAX_CHARACTERS + 1} distinct characters`);
});
