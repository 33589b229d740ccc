// bench/text.ts's report: docs/bench/text.md (or its smoke copy), every figure and how it was made.
import { table } from '../decode/report.ts';
import { fixed, median, spread, times } from '../shared/stats.ts';
import type { RealText, TrainedTokenizer } from './corpus.ts';
import { FIT_WINDOW, type PaddingFigure } from './padding.ts';

export interface Column {
  id: string;
  side: 'tandem' | 'library' | 'inline' | 'loop' | 'torch';
  runtime: 'deno' | 'node' | 'python';
  command: string;
  args: string[];
}

/** One pass of one side, as its child prints it (plus the other work the parent saw meanwhile). */
export interface Result {
  side: string;
  runtime: string;
  version: string;
  target: 'gpu' | 'cpu';
  adapter?: string;
  gpuWhy?: string;
  seconds: number;
  cpuSeconds: number;
  tokens: number;
  batches: number;
  firstBatchSeconds: number;
  counts: string;
  ids?: string | null;
  foreignCores: number;
}

export interface ReportInput {
  command: string;
  machineLines: string[];
  repLoads: number[];
  reps: number;
  seq: number;
  batch: number;
  workers: number;
  /** Paragraphs per throughput document. */
  join: number;
  real: RealText;
  bpe: TrainedTokenizer;
  trainDocuments: number;
  realTokens: number;
  pythonSample: { same: number; of: number };
  columns: Column[];
  checks: Map<string, Result>;
  samples: Map<string, Result[]>;
  padding: PaddingFigure[];
  generatedDocuments: number;
  failures: string[];
  notes: string[];
}

const LABELS: Record<string, string> = {
  'deno-tandem': 'Tandem textLoader, Deno',
  'deno-library': 'Tandem textLoader, tokenizers.js in the workers (fast: false), Deno',
  'deno-inline': 'Tandem textLoader, tokenizer inline (no workers), Deno',
  'deno-loop': "web user's loop, Deno",
  'node-tandem': 'Tandem textLoader, Node',
  'node-loop': "web user's loop, Node",
  torch: 'PyTorch DataLoader (pure-Python BPE)',
  'torch-rust': "PyTorch DataLoader (Hugging Face's Rust tokenizers)",
};

const range = (xs: number[], digits: number, scale = 1) => {
  const s = spread(xs.map((x) => x * scale));
  return `${fixed(s.median, digits)} (${fixed(s.min, digits)}–${fixed(s.max, digits)})`;
};

/** Tandem ÷ peer per repetition (the same repetition's passes), then the median and range. */
function pairedRatios(a: Result[] | undefined, b: Result[] | undefined, of: (r: Result) => number): number[] {
  if (!a || !b) return [];
  return a.slice(0, b.length).map((r, i) => of(r) / of(b[i] as Result));
}

export function reportLines(x: ReportInput): string[] {
  const rate = (r: Result) => r.tokens / r.seconds;
  const cpuPerToken = (r: Result) => r.cpuSeconds / r.tokens;
  const any = [...x.samples.values()].flat();
  const versions = [...new Set(any.map((r) => `${r.runtime}: ${r.version}`))].join('; ');
  const targets = [...new Set(any.map((r) => `${r.runtime} ${r.side} → ${r.target}${r.adapter ? ` (${r.adapter})` : ''}`))];
  const throughput = x.columns.map((c) => {
    const s = x.samples.get(c.id) ?? [];
    return [
      LABELS[c.id] ?? c.id,
      s[0]?.target ?? '—',
      range(s.map(rate), 1, 1e-3),
      range(s.map(cpuPerToken), 2, 1e6),
      range(
        s.map((r) => r.firstBatchSeconds),
        3,
      ),
      range(
        s.map((r) => r.foreignCores),
        2,
      ),
    ];
  });
  const ratioRow = (label: string, a: string, b: string) => {
    const tps = pairedRatios(x.samples.get(a), x.samples.get(b), rate);
    const cpu = pairedRatios(x.samples.get(a), x.samples.get(b), cpuPerToken);
    if (!tps.length) return [label, 'not measured', '—'];
    return [
      label,
      `${times(median(tps))} (${fixed(Math.min(...tps))}–${fixed(Math.max(...tps))})`,
      `${times(median(cpu))} (${fixed(Math.min(...cpu))}–${fixed(Math.max(...cpu))})`,
    ];
  };
  const ratios = [
    ratioRow("Deno: Tandem ÷ the web user's loop", 'deno-tandem', 'deno-loop'),
    ratioRow("Node: Tandem ÷ the web user's loop", 'node-tandem', 'node-loop'),
    ratioRow("Deno: Tandem, tokenizers.js in the workers ÷ the web user's loop", 'deno-library', 'deno-loop'),
    ratioRow("Deno: Tandem, tokenizer inline ÷ the web user's loop", 'deno-inline', 'deno-loop'),
    ratioRow('Deno: Tandem ÷ Tandem with tokenizers.js in the workers', 'deno-tandem', 'deno-library'),
    ratioRow('Tandem (Deno) ÷ PyTorch DataLoader', 'deno-tandem', 'torch'),
    ratioRow('Tandem (Node) ÷ PyTorch DataLoader', 'node-tandem', 'torch'),
    ratioRow("Tandem (Deno) ÷ PyTorch DataLoader with Hugging Face's Rust tokenizers", 'deno-tandem', 'torch-rust'),
  ];
  const padRows = x.padding.map((p) => [
    p.corpus,
    `${p.seqLen}`,
    p.mode === 'best-fit' ? `best-fit (fitWindow ${FIT_WINDOW})` : p.mode,
    `${fixed(100 * p.share, 1)}%`,
    `${p.rows}`,
  ]);
  const check = (id: string) => x.checks.get(id);
  const ref = check('deno-tandem');
  return [
    '# Text loader benchmark',
    '',
    `Command: \`${x.command}\``,
    '',
    ...x.machineLines,
    `- 1-minute load after each repetition: ${x.repLoads.map((l) => fixed(l)).join(', ')}`,
    `- Runtimes: ${versions || 'none ran'}`,
    '',
    'Absolute figures move with whatever else the machine runs; the ratios, measured side by side, are what to read.',
    '',
    '## The job',
    '',
    `- Corpus: ${x.real.documents.length} documents, ${(x.real.bytes / 1e6).toFixed(2)} MB of this machine's own text (${x.real.files} files, each content once; ${x.real.sources.join(', ')}; ${x.real.skipped} skipped as duplicates or not UTF-8), split at blank lines${x.join > 1 ? `, ${x.join} paragraphs of a file per document` : ' (each paragraph a document)'}.`,
    `- Tokenizer: a byte-level BPE (GPT-2's split, NFC) with ${x.bpe.merges} merges, vocabulary ${x.bpe.vocabSize}, trained by test/shared/bpe-trainer.ts on every 4th document (${x.trainDocuments} documents); \`<|endoftext|>\` (${x.bpe.eos}) appended to every document: ${x.realTokens} tokens, ${(x.real.bytes / x.realTokens).toFixed(2)} bytes per token.`,
    `- Batches: concat windows of ${x.seq} + 1 tokens (stride ${x.seq}), ${x.batch} rows, inputs and labels shifted by one.`,
    `- ${x.reps} repetition${x.reps === 1 ? '' : 's'}, interleaved (the order reversed every other one); each pass is a process of its own; medians with the range over repetitions.`,
    '- tokens/s: input tokens delivered ÷ the wall time from making the loader (the loop: its Tokenizer) to the last batch done on the queue (`onSubmittedWorkDone`).',
    '  CPU: user + system time of the whole process (every thread; the DataLoader: its workers too, reaped), over the same span.',
    `- Where the batches went: ${targets.join('; ') || 'nowhere (nothing ran)'}.`,
    '',
    '## Throughput',
    '',
    ...table(['side', 'to', 'k tokens/s', 'CPU ms / 1k tokens', 'first batch, s', 'other work, cores'], throughput),
    '',
    'Ratios of the same repetition, median (range):',
    '',
    ...table(['', 'tokens/s', 'CPU per token'], ratios),
    '',
    '## Same ids?',
    '',
    `Before the timings every side ran once on the CPU (untimed) and hashed each (input, label) pair it delivered (FNV-1a), and the tokens of each batch. Tandem's pass: ${ref ? `${ref.tokens} tokens in ${ref.batches} batches, ids ${ref.ids}, counts ${ref.counts}` : 'missing'}.`,
    '',
    ...table(
      ['side', 'tokens', 'batches', 'ids hash', 'counts hash', 'same as Tandem'],
      x.columns.map((c) => {
        const r = check(c.id);
        const same = r && ref && r.ids === ref.ids && r.counts === ref.counts && r.tokens === ref.tokens;
        return [
          LABELS[c.id] ?? c.id,
          `${r?.tokens ?? '—'}`,
          `${r?.batches ?? '—'}`,
          `${r?.ids ?? '—'}`,
          `${r?.counts ?? '—'}`,
          same ? 'yes' : 'NO',
        ];
      }),
    ),
    '',
    `Every timed pass delivered the same tokens per batch as this check${x.failures.some((f) => f.startsWith('rep ')) ? ', except where the notes say' : ''}.`,
    `The pure-Python BPE (bench/text/python_bpe.py) gave the same ids as @huggingface/tokenizers on ${x.pythonSample.same} of the first ${x.pythonSample.of} documents.`,
    '',
    '## Padding share of each packing mode',
    '',
    `textLoader's own \`packing().paddingShare\` (padding positions ÷ positions of the rows delivered), the same documents in the same order for every mode: the generated corpus (src/synthetic/text.ts, seed 0, ${x.generatedDocuments} documents, character ids with BOS and EOS) and the real text above (its BPE ids with EOS). 'pad' is also checked against its definition.`,
    '',
    ...table(['corpus', 'seqLen', 'mode', 'padding', 'rows'], padRows),
    '',
    '## How each side runs',
    '',
    `- **Tandem**: \`textLoader({ texts }, { tokenizer: { json }, tokenizerWorkers: ${x.workers}, seqLen: ${x.seq}, batchSize: ${x.batch}, eos, pack: 'concat', to: gpu })\`; the tokenizer runs in ${x.workers} worker threads, each building it from the JSON (inside the timed span), on Tandem's byte-level BPE road (src/text/byte-level-bpe.js: tokenizers.js's ids, checked equal here on every document, with a cache of ids per pre-tokenized piece); every batch is four i32 buffers (inputs, labels, docIds, positions) through the upload ring, released as it arrives.`,
    `- **Tandem, tokenizers.js in the workers** (Deno only): the same with \`tokenizer: { json, fast: false }\`: @huggingface/tokenizers on every document.`,
    `- **Tandem, tokenizer inline** (Deno only): the same loader given the loop's \`Tokenizer\` object (\`tokenizer: new Tokenizer(json)\`), which it runs on its event loop, one document at a time: the pipeline, packer and upload ring without the workers.`,
    "- **The web user's loop**: `new Tokenizer(json)`, then per document `tokenizer.encode(text, { add_special_tokens: false }).ids` on the main thread, appended with EOS to one growing Int32Array; every full window sliced into reused inputs/labels arrays and each batch sent with two `queue.writeBuffer` calls (it writes two arrays where Tandem writes four).",
    `- **PyTorch DataLoader**: Debian's python3-torch, \`DataLoader(dataset, batch_size=None, num_workers=${x.workers})\` over chunks of 64 documents; each worker process tokenises its chunks with **bench/text/python_bpe.py, a pure-Python byte-level BPE** reading the same tokenizer.json, so this peer measures a pure-Python tokenizer; the main process concatenates the chunks (in order) and cuts the same windows into int32 CPU tensors, on the CPU.`,
    `- **PyTorch DataLoader with Hugging Face's Rust tokenizers** (where Python has the \`tokenizers\` package): the same, each worker encoding with \`Tokenizer.from_file(tokenizer.json).encode(text, add_special_tokens=False)\`, one thread per worker (TOKENIZERS_PARALLELISM off).`,
    '- Node runs bench/text/child.ts and src/ transpiled into the cache (bench/text/node-build.ts), not dist/.',
    '',
    '## The files read',
    '',
    `${x.real.paths.map((p) => `\`${p.replace(/^\/usr\/share\//, '')}\``).join(', ')} (under /usr/share/).`,
    '',
    '## Notes',
    '',
    ...x.notes.map((n) => `- ${n}`),
    ...x.failures.slice(0, 12).map((f) => `- Failure: ${f}`),
    ...(x.notes.length || x.failures.length ? [] : ['- None.']),
  ];
}
