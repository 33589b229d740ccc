// The texts the tokenizer scenarios encode with each tokenizer.json and compare with tokenizers.js.
import { streamFor } from '../../src/random/index.ts';

export const NON_ASCII = ['Le café crème de l’été, déjà fermé à Noël.', '日本語のテキストを日本で読む。', 'emoji 🙂🚀 and 👩‍💻 too'];
/** Texts the BPE was not trained on, mixing what it was: merges apply, and bytes alone where not. */
export const UNSEEN = ['naïve façade, élan — 日本 and 東京 🙂!', "the cats don't see 3 dogs; 42 birds fly.", ''];
/** Texts that exercise the split and the normalizers: contractions, runs of spaces, tabs and newlines, digits, composed and decomposed accents, Hangul, full-width forms, ligatures, emoji sequences. */
export const TRICKY = [
  "I'm sure they've said it's what we'd do, and you'll see we're right.",
  "I'M SURE THEY'VE SAID IT'S DONE; YOU'LL SEE.\r\n\r\n  -- 12345678 and x1234y\n\n\n",
  '  two  spaces,   three,\tand a tab;\n\nnew lines\r\n  and trailing   ',
  'numbers 1234567890 and 3.14159, 1,000,000 and ٣٤٥ and ４２',
  'cafe\u0301 and café, A\u030A and Å, 한국어 and \u1112\u1161\u11AB',
  'ﬁne ﬂour, ① ② ③, ｆｕｌｌ ｗｉｄｔｈ, x² and ½',
  '👩\u200D👩\u200D👧 👍🏽 🇫🇷 — “quotes” and ‘single’ … ellipsis',
  'Ελληνικά κείμενα, русский текст, עברית, العربية, हिन्दी',
  '\u00A0non-breaking\u00A0spaces\u3000and an ideographic one',
  "'s 't 're 've 'm 'll 'd at the start, and ''double''",
  // Runs of one letter: merges of equal rank overlap, and only the leftmost-first order is right.
  'seeeeee alllllll booooo ssssss tttt eeeee ...... !!!! ---- 1111111',
  // Pieces past 64 bytes, merged through the heap: a base64 blob, a long run, a long word.
  `data:${'Zm9vYmFy'.repeat(40)}== end`,
  `${'-'.repeat(300)} ${'e'.repeat(131)} ${'thecatseesthebigdog'.repeat(9)}`,
  ' ',
  '\n',
  'a',
];

/** Llama 3's pre-tokenizer split, as its tokenizer.json writes it (the Rust library's regex dialect: `(?i:…)`). */
export const LLAMA3_SPLIT =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** Seeded random texts over many kinds of characters (surrogate pairs too, never a lone one). */
export function randomTexts(count: number, seed: number): string[] {
  const pools = [
    [0x61, 0x7a],
    [0x41, 0x5a],
    [0x30, 0x39],
    [0x20, 0x20],
    [0x20, 0x20],
    [0x21, 0x2f],
    [0x09, 0x0a],
    [0xc0, 0xff],
    [0x300, 0x36f],
    [0x391, 0x3c9],
    [0x410, 0x44f],
    [0x4e00, 0x4e80],
    [0xac00, 0xac40],
    [0x1100, 0x1112],
    [0xff01, 0xff5e],
    [0xfb00, 0xfb06],
    [0x1f600, 0x1f64f],
    [0x1f3fb, 0x1f3ff],
    [0x200d, 0x200d],
    [0x27, 0x27],
  ] as const;
  return Array.from({ length: count }, (_, i) => {
    const rng = streamFor(seed, i);
    const length = 1 + rng.int(60);
    let text = '';
    for (let k = 0; k < length; k++) {
      const [lo, hi] = pools[rng.int(pools.length)]!;
      text += String.fromCodePoint(lo + rng.int(hi - lo + 1));
    }
    return text;
  });
}
