// Tandem's tokenizer roads (src/text/byte-level-bpe.js, src/text/metaspace-bpe.js) against
// @huggingface/tokenizers run directly, on one thread, for each tokenizer.json shape a road covers.
// Side by side in one run, interleaved repetitions (the order reversed every other one), medians.
//
//   npx deno run -A bench/tokenizers.ts [--reps 5] [--bytes 2000000] [--merges 2000] [--out docs/bench/tokenizers.md] [--smoke]
//
// Documents: a held-out real text (this machine's license and copyright files, split at blank
// lines; bench/text/corpus.ts). Tokenizers, trained by test/shared/bpe-trainer.ts on every 4th
// document: a byte-level BPE written as GPT-2's tokenizer.json (ByteLevel pre-tokenizer) and as
// Llama 3's (the same merges behind Llama 3's Split regex), and a SentencePiece-style BPE written
// as Llama 2's (Prepend and Replace normalizer, byte fallback).
// Each side builds its tokenizer from the JSON (timed) and encodes every document twice: the first
// pass is a fresh worker's first epoch, caches cold; the second a later epoch, caches warm (both
// sides cache: tokenizers.js an LRU of 10 000 words, Tandem's roads every piece up to 200 000).
// Every document's ids must be equal on both sides, or the run fails.
import { writeFileSync } from 'node:fs';
import process from 'node:process';
import { Tokenizer } from '@huggingface/tokenizers';
import { cacheDir } from '../src/runtime/index.ts';
import { byteLevelBpe, librarySplitPattern } from '../src/text/byte-level-bpe.js';
import { metaspaceBpe } from '../src/text/metaspace-bpe.js';
import { LLAMA3_SPLIT } from '../test/shared/tokenizer-texts.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { describeMachine, machineLines, machineLoad } from './shared/machine.ts';
import { fixed, spread, times } from './shared/stats.ts';
import { realText, trainedTokenizer } from './text/corpus.ts';

const args = benchArgs('tokenizers', {
  reps: { type: 'number', default: 5, smoke: 1, help: 'at least 3 (except with --smoke)' },
  bytes: { type: 'number', default: 2_000_000, smoke: 40_000, help: 'held-out real text read as documents' },
  merges: { type: 'number', default: 2000, smoke: 100, help: "each BPE's merges (trained on every 4th document)" },
  out: { type: 'string', default: 'docs/bench/tokenizers.md', smoke: smokeOut('bench-tokenizers.md') },
});
const { smoke, argv } = args;
const reps = smoke ? args.values.reps : Math.max(3, args.values.reps);
const command =
  `npx deno run -A bench/tokenizers.ts ${argv.filter((a, i) => a !== '--out' && argv[i - 1] !== '--out' && !a.startsWith('--out=')).join(' ')}`.trim();
const log = (s: string) => console.error(`[bench:tokenizers] ${s}`);
log(`command: ${command}`);
const machine = describeMachine();
const loadAtStart = machineLoad();
log(`load: ${loadAtStart}`);

const real = realText(args.values.bytes, 1);
const trainTexts: string[] = [];
for (let i = 0, bytes = 0; i < real.documents.length && bytes < Math.min(300_000, args.values.bytes / 2); i += 4) {
  trainTexts.push(real.documents[i] ?? '');
  bytes += trainTexts[trainTexts.length - 1]?.length ?? 0;
}
const work = `${cacheDir()}/bench/text`;
const byteLevel = trainedTokenizer(work, trainTexts, args.values.merges, 'byte-level');
const sentencePiece = trainedTokenizer(work, trainTexts, args.values.merges, 'sentencepiece');
const llama3Json = {
  ...byteLevel.json,
  pre_tokenizer: {
    type: 'Sequence',
    pretokenizers: [
      { type: 'Split', pattern: { Regex: LLAMA3_SPLIT }, behavior: 'Isolated', invert: false },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
    ],
  },
};
log(`real text: ${real.files} files, ${(real.bytes / 1e6).toFixed(2)} MB, ${real.documents.length} documents`);

type Encode = (text: string) => ArrayLike<number>;
interface Shape {
  name: string;
  json: object;
  vocabSize: number;
  library: () => Encode;
  road: () => Encode;
}
const NO_SPECIAL = { add_special_tokens: false };
const libraryOf = (json: object) => () => {
  const t = new Tokenizer(json, {});
  return (text: string) => t.encode(text, NO_SPECIAL).ids;
};
const roadOf = (build: () => { encode(text: string): Uint32Array | undefined } | undefined, name: string) => () => {
  const road = build();
  if (road === undefined) throw new Error(`${name}: Tandem's road refused the tokenizer.json`);
  return (text: string) => {
    const ids = road.encode(text);
    if (ids === undefined) throw new Error(`${name}: Tandem's road handed a document back`);
    return ids;
  };
};
const shapes: Shape[] = [
  {
    name: "GPT-2's (ByteLevel)",
    json: byteLevel.json,
    vocabSize: byteLevel.vocabSize,
    library: libraryOf(byteLevel.json),
    road: roadOf(() => byteLevelBpe(byteLevel.json), 'GPT-2'),
  },
  {
    name: "Llama 3's (Split, then ByteLevel)",
    json: llama3Json,
    vocabSize: byteLevel.vocabSize,
    library: libraryOf(llama3Json),
    road: roadOf(() => byteLevelBpe(llama3Json, {}, librarySplitPattern(new Tokenizer(llama3Json, {}))), 'Llama 3'),
  },
  {
    name: "Llama 2's (SentencePiece-style: Prepend, Replace, byte fallback)",
    json: sentencePiece.json,
    vocabSize: sentencePiece.vocabSize,
    library: libraryOf(sentencePiece.json),
    road: roadOf(() => metaspaceBpe(sentencePiece.json), 'Llama 2'),
  },
];

const failures: string[] = [];
/** One side's run: build (timed into the first pass), then two passes; the ids' count, and a hash of every id. */
function runSide(make: () => Encode): { first: number; second: number; tokens: number; ids: Int32Array[] } {
  const t0 = performance.now();
  const encode = make();
  const ids: Int32Array[] = new Array(real.documents.length);
  let tokens = 0;
  for (const [i, doc] of real.documents.entries()) {
    const got = encode(doc);
    ids[i] = Int32Array.from(got);
    tokens += got.length;
  }
  const t1 = performance.now();
  for (const doc of real.documents) encode(doc);
  const t2 = performance.now();
  return { first: (t1 - t0) / 1000, second: (t2 - t1) / 1000, tokens, ids };
}

interface Row {
  shape: Shape;
  tokens: number;
  library: { first: number[]; second: number[] };
  road: { first: number[]; second: number[] };
}
const rows: Row[] = shapes.map((shape) => ({ shape, tokens: 0, library: { first: [], second: [] }, road: { first: [], second: [] } }));
for (let rep = 0; rep < reps; rep++) {
  for (const row of rows) {
    const order = rep % 2 === 0 ? (['library', 'road'] as const) : (['road', 'library'] as const);
    const got = { library: undefined as ReturnType<typeof runSide> | undefined, road: undefined as ReturnType<typeof runSide> | undefined };
    for (const side of order) {
      try {
        got[side] = runSide(row.shape[side]);
        row[side].first.push(got[side].first);
        row[side].second.push(got[side].second);
      } catch (e) {
        failures.push(`${row.shape.name}, ${side}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    const [a, b] = [got.library, got.road];
    if (a === undefined || b === undefined) continue;
    row.tokens = a.tokens;
    const differs = a.ids.findIndex((x, i) => {
      const y = b.ids[i]!;
      return x.length !== y.length || x.some((v, k) => v !== y[k]);
    });
    if (differs >= 0) failures.push(`${row.shape.name}: document ${differs} has other ids on Tandem's road than in tokenizers.js`);
  }
  log(`repetition ${rep + 1} of ${reps} done`);
}
const loadAtEnd = machineLoad();

const rate = (tokens: number, seconds: number[]) => tokens / spread(seconds).median / 1e6;
const ratio = (library: number[], road: number[]) => spread(library).median / spread(road).median;
const table = rows.map((r) => {
  const cells = [
    r.shape.name,
    `${r.shape.vocabSize}`,
    fixed(rate(r.tokens, r.library.first), 2),
    fixed(rate(r.tokens, r.road.first), 2),
    times(ratio(r.library.first, r.road.first)),
    fixed(rate(r.tokens, r.library.second), 2),
    fixed(rate(r.tokens, r.road.second), 2),
    times(ratio(r.library.second, r.road.second)),
  ];
  return `| ${cells.join(' | ')} |`;
});
const report = [
  '# Tokenizer roads against tokenizers.js, one thread',
  '',
  `Command: \`${command}\``,
  '',
  ...machineLines(loadAtStart, loadAtEnd, machine),
  '',
  `Documents: ${real.documents.length} paragraphs of this machine's license and copyright files (${(real.bytes / 1e6).toFixed(2)} MB, bench/text/corpus.ts), encoded twice by each side on one thread (Deno ${Deno.version.deno}). Tokenizers trained by test/shared/bpe-trainer.ts with ${args.values.merges} merges on every 4th document (${trainTexts.length} documents). Median of ${reps} interleaved repetitions; every document's ids equal on both sides.`,
  '',
  'Millions of tokens per second. The first pass includes building the tokenizer from its JSON and starts with empty caches (a fresh worker on its first epoch); the second is the same instance again (a later epoch, or a long corpus once its common words are cached).',
  '',
  '| tokenizer.json shape | vocabulary | tokenizers.js, 1st pass | Tandem, 1st pass | Tandem ÷ tokenizers.js | tokenizers.js, 2nd pass | Tandem, 2nd pass | Tandem ÷ tokenizers.js |',
  '|---|---|---|---|---|---|---|---|',
  ...table,
  '',
  "- Sides: `new Tokenizer(json, {}).encode(text, { add_special_tokens: false }).ids` (@huggingface/tokenizers), and Tandem's road for the shape, which the tokenizer workers use in place of it (`src/text/tokenize-worker.js`).",
  "- Why tokenizers.js is slowest on Llama 2's shape: it merges a document of that shape as one word (its normalizer writes every space as '▁' and there is no pre-tokenizer), with no cache. Tandem's road cuts the text wherever no merge joins the two code points on either side (before a '▁' that follows a word, around new lines) and caches each piece's ids; its first pass is slower than the byte-level roads' because its pieces are longer and more of them are new (a run of '▁' stays with the word after it).",
  '- The tokenizers here are small (2000 merges by default); real ones have vocabularies of 32 000 (Llama 2) to 128 000 (Llama 3) tokens, with longer merge chains per new piece. Not measured here: no such tokenizer.json on this machine, and nothing is downloaded.',
  ...(failures.length > 0 ? ['', '## Failures', '', ...failures.map((f) => `- ${f}`)] : []),
  '',
];
writeFileSync(args.values.out, report.join('\n'));
log(`wrote ${args.values.out}`);
for (const line of table) log(line);
if (failures.length > 0) {
  for (const f of failures) log(`FAILED: ${f}`);
  process.exit(1);
}
args.done(
  `${rows.length} shapes × ${reps} repetition(s), ${rows.map((r) => `${times(ratio(r.library.first, r.road.first))}`).join(' / ')} on the 1st pass`,
);
