/**
 * Tandem's SentencePiece-style BPE road (src/text/metaspace-bpe.js) against tokenizers.js run
 * directly: the same ids on every text, for the trained Llama-2-shaped tokenizer.json and each
 * setting the road covers; the shapes it does not cover refused. Shared by vitest (Node), Deno and
 * the Chromium tier through tokenizer-scenarios.ts.
 */
import { Tokenizer } from '@huggingface/tokenizers';
import { corpusDocuments, corpusTokenizerJson } from '../../src/synthetic/index.ts';
import { metaspaceBpe } from '../../src/text/metaspace-bpe.js';
import { type TextDocumentBytes, TokenizerPool } from '../../src/text/tokenizer.ts';
import { assertEqual, check } from './assert.ts';
import { trainMetaspaceBpe } from './bpe-trainer.ts';
import { NON_ASCII, randomTexts, TRICKY, UNSEEN } from './tokenizer-texts.ts';

/** tokenizers.js's post-processor then throws on every text, special tokens or not; the roads must not take it. */
export const NAMES_SECOND_TEXT = {
  type: 'TemplateProcessing',
  single: [{ Sequence: { id: 'B', type_id: 0 } }],
  pair: [],
  special_tokens: {},
};

/** `json` with merges first in rank that join a word's end to the '▁' after it, and lines. */
function acrossSpaces(json: Json): object {
  const extra: [string, string][] = [
    ['e', '\u2581t'],
    ['s', '\u2581'],
    ['.', '\n'],
    ['\n', '\u2581'],
  ];
  const vocab = { ...json.model.vocab };
  for (const symbol of ['\n', ...extra.map(([a, b]) => a + b)]) vocab[symbol] ??= Object.keys(vocab).length;
  return { ...json, model: { ...json.model, vocab, merges: [...extra, ...json.model.merges] } };
}

/** `json` with 300 added tokens `<|reserved_N|>`, none in the texts but for a prefix of one. */
function withReserved(json: Json): object {
  const first = Object.keys(json.model.vocab).length;
  const reserved = Array.from({ length: 300 }, (_, i) => ({
    id: first + i,
    content: `<|reserved_${i}|>`,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  return { ...json, added_tokens: [...json.added_tokens, ...reserved] };
}

/** `json` whose added tokens are normalized, as some conversions of Llama 2 write them. */
function withNormalizedAdded(json: Json): Json {
  return { ...json, added_tokens: json.added_tokens.map((t) => ({ ...t, normalized: true })) };
}

type Json = {
  normalizer: object | null;
  added_tokens: object[];
  model: { merges: [string, string][]; vocab: Record<string, number> } & Record<string, unknown>;
};

/** Texts around the marker: runs of spaces at either end, the marker itself in the text, a word of unseen characters. */
const AROUND_THE_MARKER = [
  '   three leading spaces and two trailing  ',
  'a\u2581literal\u2581marker and \u2581\u2581two of them',
  '\u2581starts with the marker',
  'tabs\tand\nnew lines \n end',
  'ŋ ŋŋ ᚠᚢᚦ and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢: nothing here was trained',
  'the the the  the   the    the',
  'it ends.\n the next line\n\nand its lines.\n\n the end is near',
  'tags without their marks: s>, /s, <unk and \u2581s>',
  '<p>a tag, a <|reserved_ prefix and <|reserved_7 without its end</p>',
];

/**
 * The road's ids equal tokenizers.js's for every text and covered setting, and the road takes
 * every such text itself; it hands back a text holding an added token and refuses what it does not
 * cover. Through the workers, the default and `fast: false` give the same ids.
 */
export async function metaspaceRoadMatchesTokenizersJs(): Promise<void> {
  const json = trainMetaspaceBpe([...corpusDocuments(3, 150), ...NON_ASCII, ...NON_ASCII, 'the  the   the    the'], 400) as Json;
  const { model } = json;
  const metaspace = (scheme: string, normalizer: object | null = null) => ({
    ...json,
    normalizer,
    pre_tokenizer: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: scheme, split: false },
  });
  const withoutBytes = Object.fromEntries(
    Object.entries(model.vocab).filter(([token]) => !/^<0x[0-9A-F]{2}>$/.test(token) || token < '<0x80>'),
  );
  const variants: [string, object][] = [
    ["as trained (Llama 2's: Prepend and Replace, byte fallback, unknowns fused)", json],
    ['Metaspace, prepend_scheme first', metaspace('first')],
    ['Metaspace, prepend_scheme always, NFKC', metaspace('always', { type: 'NFKC' })],
    ['Metaspace, prepend_scheme never', metaspace('never')],
    ['Replace alone (no prepended marker)', { ...json, normalizer: { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' } }],
    ['no byte fallback: unknowns fused', { ...json, model: { ...model, byte_fallback: false } }],
    ['no byte fallback, unknowns not fused', { ...json, model: { ...model, byte_fallback: false, fuse_unk: false } }],
    ['byte tokens from 0x80 missing: unknown instead', { ...json, model: { ...model, vocab: withoutBytes } }],
    ['no unknown token: dropped', { ...json, model: { ...model, byte_fallback: false, unk_token: null } }],
    ['ignore_merges', { ...json, model: { ...model, ignore_merges: true } }],
    ["merges as 'a b' strings", { ...json, model: { ...model, merges: model.merges.map((m) => m.join(' ')) } }],
    ["no normalizer or pre-tokenizer (the generated corpus' character-level BPE)", corpusTokenizerJson()],
    // Merges across what SentencePiece keeps apart (a word and the '▁' after it, a new line): the
    // road cuts only between code points no merge joins, so these move its cuts, first in rank.
    ['merges across a word and the space after it, and across new lines', acrossSpaces(json)],
    ["300 reserved added tokens (as Llama 3's)", withReserved(json)],
    ['added tokens normalized (found by their normalized text)', withNormalizedAdded(json)],
    ['added tokens normalized, Metaspace', withNormalizedAdded(metaspace('always'))],
  ];
  const texts = [...corpusDocuments(7, 30), ...NON_ASCII, ...UNSEEN, ...TRICKY, ...AROUND_THE_MARKER, ...randomTexts(300, 23)];
  for (const [name, variant] of variants) {
    const direct = new Tokenizer(variant, {});
    const fast = metaspaceBpe(variant, {});
    check(fast !== undefined, `${name}: the fast road takes it`);
    for (const [i, text] of texts.entries()) {
      const got = fast.encode(text);
      check(got !== undefined, `${name}: text ${i} ${JSON.stringify(text)} was handed back`);
      assertEqual([...got], direct.encode(text, { add_special_tokens: false }).ids, `${name}: text ${i} ${JSON.stringify(text)}`);
    }
  }
  const merged = new Tokenizer(json, {}).encode(texts[0]!, { add_special_tokens: false }).ids;
  check(
    merged.some((id) => id >= 3 + 256 + 100),
    'merges apply: the first corpus text uses merged tokens',
  );
  // Added tokens written in a text (normalized: false) are cut out, as tokenizers.js does, and the
  // sections between them encoded alone: each gets its own '▁' prepended.
  const withAdded = (variant: object, texts: string[], what: string) => {
    const direct = new Tokenizer(variant, {});
    const road = metaspaceBpe(variant)!;
    for (const text of texts) {
      const got = road.encode(text);
      check(got !== undefined, `${what}: ${JSON.stringify(text)} was handed back`);
      assertEqual([...got], direct.encode(text, { add_special_tokens: false }).ids, `${what}: ${JSON.stringify(text)}`);
    }
  };
  withAdded(json, ['before </s> after', '</s>', '<s></s>', ' <s> ', '<s>x</s>y', 'a </s'], 'a text holding added tokens is cut at them');
  withAdded(withReserved(json), ['a <|reserved_299|> b', '<s', '<|reserved_2|><|reserved_29|>'], 'so is one holding any of 300');
  withAdded(metaspace('always'), ['before </s> after', ' <s> x'], "so with Metaspace's 'always'");
  check(
    metaspaceBpe(metaspace('first'))!.encode('a </s> b') === undefined,
    "with Metaspace's 'first', one holding an added token is handed back",
  );
  const normalized = metaspaceBpe(withNormalizedAdded(json))!;
  const ligature = { id: 9999, content: '<\uFB01>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: false };
  const nfkc = metaspaceBpe({ ...metaspace('always', { type: 'NFKC' }), added_tokens: [...json.added_tokens, ligature] })!;
  check(
    normalized.encode('a <s> b') === undefined && nfkc.encode('a <fi> b') === undefined && nfkc.encode('a <f i> b') !== undefined,
    'so is one holding a normalized added token, found by its normalized text',
  );
  const refused = [
    ['a Replace by regex', { ...json, normalizer: { type: 'Replace', pattern: { Regex: ' +' }, content: '\u2581' } }],
    ['a Lowercase normalizer', { ...json, normalizer: { type: 'Lowercase' } }],
    ['an unknown token the vocabulary lacks', { ...json, model: { ...model, unk_token: '<missing>' } }],
    ['dropout', { ...json, model: { ...model, dropout: 0.1 } }],
    ['a post-processor naming the second text', { ...json, post_processor: NAMES_SECOND_TEXT }],
    ['a ByteLevel pre-tokenizer', { ...json, pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, use_regex: true } }],
  ] as const;
  for (const [name, variant] of refused) check(metaspaceBpe(variant) === undefined, `${name}: refused`);
  check(metaspaceBpe(json, { remove_space: true }) === undefined, 'a config that removes spaces: refused');

  const utf8 = new TextEncoder();
  const docs = [...texts.slice(0, 80), 'with </s> inside'].map(
    (t, i): TextDocumentBytes => ({ key: `d${i}`, bytes: utf8.encode(t), ext: 'txt' }),
  );
  const limits = { maxDocumentBytes: 4096, maxDocumentTokens: 2048 };
  await using library = await TokenizerPool.open({ json, fast: false }, { ...limits, workers: 1 });
  await using road = await TokenizerPool.open({ json }, { ...limits, workers: 2 });
  const [a, b] = await Promise.all([library, road].map((pool) => Promise.all(docs.map((d) => pool.encode(d)))));
  assertEqual(
    b!.map((d) => [...d.tokens]),
    a!.map((d) => [...d.tokens]),
    'Llama 2 shape: through the workers, the default road gives the ids of fast: false',
  );
}
