// The text loader from raw text to GPU batches, against the loop a web user writes and, for scale,
// PyTorch's DataLoader; and the padding share of each packing mode. Side by side in one run,
// interleaved repetitions (the order reversed every other one), medians.
//
//   npx deno run -A bench/text.ts [--reps 5] [--bytes 2000000] [--merges 2000] [--seq 256] [--batch 8]
//                                 [--workers 2] [--generated 20000] [--join 1] [--no-node] [--out docs/bench/text.md] [--smoke]
//
// Throughput (each side a child process of its own, bench/text/child.ts and torch_text.py, so its
// CPU time is its own): documents of a held-out real text (this machine's license and copyright
// files, split at blank lines; bench/text/corpus.ts) → a byte-level BPE trained on every 4th
// document (test/shared/bpe-trainer.ts) + EOS → concat windows → batches of --batch × --seq:
//   - Tandem: textLoader({ texts }, { tokenizer: { json }, tokenizerWorkers, pack: 'concat', to: gpu });
//   - the web user's loop: the same @huggingface/tokenizers Tokenizer on the main thread, one
//     Int32Array stream, windows sliced into inputs/labels, two writeBuffer calls per batch;
//   - in Deno and Node (src/ transpiled into the cache, bench/text/node-build.ts);
//   - PyTorch's DataLoader, --workers worker processes tokenising with a pure-Python copy of the
//     same BPE (bench/text/python_bpe.py; its ids checked equal on a sample first), packing in the
//     main process, CPU tensors.
// Before timing, one untimed pass of each side on the CPU hashes every (input, label) pair: the
// sides must deliver the same ids; every timed pass must deliver the same tokens per batch.
// Padding (bench/text/padding.ts): concat, best-fit (fitWindow 64) and pad at seqLen 256 and 64
// on the generated corpus (src/synthetic/text.ts) and on the held-out real text.
// --smoke (bench/shared/args.ts): 60 kB of text, 200 merges, 1 repetition, every side, the report
// under test-results/bench-smoke/; a mismatch or a failed side fails the run.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import process from 'node:process';
import { Tokenizer } from '@huggingface/tokenizers';
import { cacheDir } from '../src/runtime/index.ts';
import { corpusDocuments, corpusIds, CORPUS_BOS, CORPUS_EOS } from '../src/synthetic/index.ts';
import { runWatched } from './loader/proc.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { describeMachine, machineLines, machineLoad } from './shared/machine.ts';
import { fixed, spread } from './shared/stats.ts';
import { realText, trainedTokenizer } from './text/corpus.ts';
import { nodeChild } from './text/node-build.ts';
import { paddingShares, type PaddingFigure } from './text/padding.ts';
import { reportLines, type Column, type Result } from './text/report.ts';

const args = benchArgs('text', {
  reps: { type: 'number', default: 5, smoke: 1, help: 'at least 3 (except with --smoke)' },
  bytes: { type: 'number', default: 2_000_000, smoke: 60_000, help: 'held-out real text read for the throughput corpus' },
  merges: { type: 'number', default: 2000, smoke: 200, help: "the BPE's merges (trained on every 4th document)" },
  seq: { type: 'number', default: 256 },
  batch: { type: 'number', default: 8 },
  workers: { type: 'number', default: 2, help: "Tandem's tokenizer workers and the DataLoader's num_workers" },
  generated: { type: 'number', default: 20000, smoke: 500, help: 'generated-corpus documents for the padding figures' },
  join: { type: 'number', default: 1, help: 'paragraphs per throughput document (1: each paragraph a document)' },
  'no-node': { type: 'boolean' },
  out: { type: 'string', default: 'docs/bench/text.md', smoke: smokeOut('bench-text.md') },
});
const { smoke, argv } = args;
const reps = smoke ? args.values.reps : Math.max(3, args.values.reps);
const { seq, batch, workers, out: outPath } = args.values;
const command =
  `npx deno run -A bench/text.ts ${argv.filter((a, i) => a !== '--out' && argv[i - 1] !== '--out' && !a.startsWith('--out=')).join(' ')}`.trim();
const root = new URL('../', import.meta.url).pathname.replace(/\/$/, '');
const log = (s: string) => console.error(`[bench:text] ${s}`);
const failures: string[] = [];
const notes: string[] = [];

log(`command: ${command}`);
const machine = describeMachine();
const loadAtStart = machineLoad();
log(`machine: ${machine.line}`);
log(`load: ${loadAtStart}`);

// ---- corpus and tokenizer ---------------------------------------------------------------------
const real = realText(args.values.bytes, args.values.join);
const trainTexts: string[] = [];
for (let i = 0, bytes = 0; i < real.documents.length && bytes < Math.min(300_000, args.values.bytes / 2); i += 4) {
  trainTexts.push(real.documents[i] ?? '');
  bytes += trainTexts[trainTexts.length - 1]?.length ?? 0;
}
const work = `${cacheDir()}/bench/text`;
const t0 = performance.now();
const bpe = trainedTokenizer(work, trainTexts, args.values.merges);
log(`real text: ${real.files} files, ${(real.bytes / 1e6).toFixed(2)} MB, ${real.documents.length} documents (${real.sources.join(', ')})`);
log(
  `tokenizer: ${bpe.merges} merges, vocabulary ${bpe.vocabSize}, ${bpe.cached ? 'cached' : `trained in ${((performance.now() - t0) / 1000).toFixed(1)} s`}: ${bpe.path}`,
);
mkdirSync(work, { recursive: true });
const docsPath = `${work}/docs-${process.pid}.json`;
writeFileSync(docsPath, JSON.stringify(real.documents));
const hf = new Tokenizer(bpe.json, {});
const hfIds = real.documents.map((d) => Int32Array.from(hf.encode(d, { add_special_tokens: false }).ids));
const realTokens = hfIds.reduce((s, x) => s + x.length + 1, 0);
log(`${realTokens} tokens with EOS (${(real.bytes / realTokens).toFixed(2)} bytes per token)`);

// ---- the pure-Python tokenizer gives the same ids ----------------------------------------------
// Debian's python3 holds torch here; TANDEM_PYTHON names another (a machine whose torch is elsewhere).
const PYTHON = process.env.TANDEM_PYTHON ?? '/usr/bin/python3';
const SAMPLE = Math.min(real.documents.length, smoke ? 100 : 400);
const sampled = await runWatched(PYTHON, [
  `${root}/bench/text/torch_text.py`,
  '--docs',
  docsPath,
  '--tokenizer',
  bpe.path,
  '--ids-of',
  `${SAMPLE}`,
]);
let pythonSame = 0;
if (sampled.code !== 0) failures.push(`python_bpe.py failed: ${sampled.stderr.trim().split('\n').slice(-1)[0]}`);
else {
  const got = JSON.parse(sampled.stdout) as number[][];
  for (let i = 0; i < SAMPLE; i++) {
    const want = hfIds[i] ?? new Int32Array();
    const mine = got[i] ?? [];
    if (mine.length === want.length && mine.every((x, k) => x === want[k])) pythonSame++;
    else if (failures.length < 5)
      failures.push(`python_bpe.py: document ${i} has other ids than @huggingface/tokenizers (${mine.length} against ${want.length})`);
  }
}
log(`python_bpe.py: ${pythonSame} of ${SAMPLE} documents with the same ids as @huggingface/tokenizers`);

// ---- the sides --------------------------------------------------------------------------------
const common = ['--docs', docsPath, '--tokenizer', bpe.path, '--seq', `${seq}`, '--batch', `${batch}`, '--eos', `${bpe.eos}`];
const columns: Column[] = [];
const deno = process.execPath;
for (const side of ['tandem', 'library', 'inline', 'loop'] as const)
  columns.push({
    id: `deno-${side}`,
    side,
    runtime: 'deno',
    command: deno,
    args: ['run', '-A', `${root}/bench/text/child.ts`, '--side', side, '--workers', `${workers}`, ...common],
  });
if (!args.values['no-node']) {
  const node = await nodeChild(root, cacheDir());
  log(`node child: ${node.child}${node.built ? ' (transpiled now)' : ''}`);
  for (const side of ['tandem', 'loop'] as const)
    columns.push({
      id: `node-${side}`,
      side,
      runtime: 'node',
      command: 'node',
      args: [node.child, '--side', side, '--workers', `${workers}`, ...common],
    });
}
columns.push({
  id: 'torch',
  side: 'torch',
  runtime: 'python',
  command: PYTHON,
  args: [`${root}/bench/text/torch_text.py`, '--workers', `${workers}`, ...common],
});
// The DataLoader with Hugging Face's Rust tokenizers, where this Python has the package.
const rust = await runWatched(PYTHON, ['-c', 'import tokenizers'], { cwd: root });
if (rust.code === 0)
  columns.push({
    id: 'torch-rust',
    side: 'torch',
    runtime: 'python',
    command: PYTHON,
    args: [`${root}/bench/text/torch_text.py`, '--rust', '--workers', `${workers}`, ...common],
  });
else notes.push("No DataLoader with Hugging Face's Rust tokenizers: this machine's Python has no `tokenizers` package.");

const runColumn = async (c: Column, extra: string[]): Promise<Result> => {
  const r = await runWatched(c.command, [...c.args, ...extra], { cwd: root });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (r.code !== 0 || !line.startsWith('{'))
    throw new Error(`${c.id} exited ${r.code}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  return { ...(JSON.parse(line) as Omit<Result, 'foreignCores'>), foreignCores: r.foreignCores };
};

// Untimed: every side once on the CPU, hashing its ids; they must agree (and warm the page cache).
const checks = new Map<string, Result>();
for (const c of columns) {
  try {
    const r = await runColumn(c, ['--check', '--gpu', 'off']);
    checks.set(c.id, r);
    log(`check ${c.id}: ${r.tokens} tokens in ${r.batches} batches, ids ${r.ids}, counts ${r.counts}`);
  } catch (e) {
    failures.push(`check pass: ${(e as Error).message}`);
  }
}
const reference = checks.get('deno-tandem');
for (const [id, r] of checks)
  if (reference && (r.ids !== reference.ids || r.counts !== reference.counts || r.tokens !== reference.tokens))
    failures.push(
      `${id} delivered other ids or counts than Tandem: ${r.tokens} tokens, ids ${r.ids}, counts ${r.counts} (Tandem: ${reference.tokens}, ${reference.ids}, ${reference.counts})`,
    );
// Every token is an input once, but a last one left alone after a full window (it was a label already).
const wantTokens = (realTokens - 1) % seq === 0 ? realTokens - 1 : realTokens;
if (reference && reference.tokens !== wantTokens)
  failures.push(`Tandem delivered ${reference.tokens} input tokens, the corpus has ${realTokens} (want ${wantTokens})`);

// ---- interleaved repetitions ------------------------------------------------------------------
const samples = new Map<string, Result[]>();
const repLoads: number[] = [];
for (let rep = 0; rep < reps; rep++) {
  const order = rep % 2 === 0 ? columns : [...columns].reverse();
  for (const c of order) {
    try {
      const r = await runColumn(c, []);
      samples.set(c.id, [...(samples.get(c.id) ?? []), r]);
      if (reference && (r.tokens !== reference.tokens || r.counts !== reference.counts))
        failures.push(
          `rep ${rep + 1} ${c.id}: ${r.tokens} tokens (counts ${r.counts}), Tandem's check pass ${reference.tokens} (${reference.counts})`,
        );
      log(
        `rep ${rep + 1} ${c.id} (${r.target}): ${(r.tokens / r.seconds / 1e3).toFixed(1)} k tokens/s, ${((r.cpuSeconds / r.tokens) * 1e6).toFixed(1)} CPU ms / 1k tokens, other work ${fixed(r.foreignCores)} cores`,
      );
    } catch (e) {
      failures.push(`rep ${rep + 1}: ${(e as Error).message}`);
      log((e as Error).message);
    }
  }
  repLoads.push(loadavg()[0] ?? Number.NaN);
}
const gpuWhy = [...samples.values()].flat().find((r) => r.gpuWhy)?.gpuWhy;
if (gpuWhy) notes.push(`GPU unavailable to a side, which ran to 'cpu' instead: ${gpuWhy}`);

// ---- padding shares ---------------------------------------------------------------------------
const generated = corpusDocuments(0, args.values.generated);
const byText = new Map(real.documents.map((d, i) => [d, hfIds[i] ?? new Int32Array()]));
const padding: PaddingFigure[] = [];
for (const [name, texts, idsOf, specials] of [
  ['generated', generated, corpusIds, { bos: CORPUS_BOS, eos: CORPUS_EOS }],
  ['real text', real.documents, (t: string) => byText.get(t) ?? new Int32Array(), { eos: bpe.eos }],
] as const) {
  const got = await paddingShares(name, texts, idsOf, specials, [256, 64]);
  padding.push(...got.figures);
  failures.push(...got.problems);
}
rmSync(docsPath, { force: true });
const loadAtEnd = machineLoad();

// ---- report -----------------------------------------------------------------------------------
const text = reportLines({
  command,
  machineLines: machineLines(loadAtStart, loadAtEnd, machine),
  repLoads,
  reps,
  seq,
  batch,
  workers,
  join: args.values.join,
  real,
  bpe,
  trainDocuments: trainTexts.length,
  realTokens,
  pythonSample: { same: pythonSame, of: SAMPLE },
  columns,
  checks,
  samples,
  padding,
  generatedDocuments: generated.length,
  failures: [...new Set(failures)],
  notes,
}).join('\n');
console.log(text);
writeFileSync(outPath, `${text}\n`);
log(`wrote ${outPath}`);
if (smoke) {
  if (failures.length || samples.size < columns.length) {
    console.error(`[bench:text] smoke run failed:\n${[...new Set(failures)].map((m) => `  - ${m}`).join('\n')}`);
    process.exit(1);
  }
  const tandem = spread((samples.get('deno-tandem') ?? []).map((r) => r.tokens / r.seconds)).median;
  args.done(
    `${columns.length} sides × ${reps} repetition(s), ${reference?.tokens} tokens, Tandem (Deno) ${(tandem / 1e3).toFixed(0)} k tokens/s; padding ${padding.length} figures`,
  );
}
process.exit(0);
