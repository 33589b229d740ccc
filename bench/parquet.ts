// Parquet sources (`loader({ parquet: [files] })`, `textLoader({ parquet: [file] })`) against the
// same data as files, side by side in one run: interleaved repetitions (the order reversed every
// other repetition), medians.
//
//   npx deno run -A bench/parquet.ts [--reps 5] [--corpus DIR] [--images N] [--row-group 256] [--delay-ms 20]
//                                    [--batch 32] [--threads 2] [--workers 2] [--no-node] [--stream-gb 2]
//                                    [--text-bytes 2000000] [--wait-quiet 0] [--out docs/bench/parquet.md] [--smoke]
//
// 1. Images, the same photographs: bench/loader.ts's photo corpus (its generator and cache; any
//    ImageNet-style folder with --corpus) written once into a Hub-shaped Parquet file (an `image`
//    struct { bytes, path }, an INT64 ClassLabel `label` with its names in the `huggingface`
//    metadata, snappy, --row-group rows per row group; bench/parquet/write.ts). The job of
//    bench/loader.ts, Resize(224) + CenterCrop(224) to RGB u8 batches of --batch: Tandem's loader()
//    over the Parquet file and over the folder, in Deno and in Node (bench/parquet/child.ts), and
//    PyTorch's DataLoader over the folder (bench/loader/torch_loader.py, --workers workers).
// 2. The same Parquet file over HTTP from a Range-capable server on 127.0.0.1 in this process,
//    --delay-ms added before every answer (bench/parquet/server.ts): HTTP ÷ local disk.
// 3. Text: textLoader({ parquet: [file] }) against the same documents as { texts } in memory and
//    as a folder of text files, a byte-level BPE tokenizer.json in --workers workers, pack
//    'best-fit', seqLen 256 (bench/text.ts's held-out real text and tokenizer, bench/text/corpus.ts).
// 4. Memory while streaming a large Parquet file (--stream-gb, the corpus repeated; made once into
//    the cache, after checking the disk: under 10 GB free it makes 1 GB and says so) through
//    loader() to 'cpu' batches of 8 at 32×32; the process's RSS read every few batches.
//    Once per runtime, after the repetitions (not repeated: it is a memory figure).
// Each loader is a child process; the parent samples its whole process tree from /proc every
// 50 ms (bench/loader/proc.ts: peak RSS of the tree, CPU) and measures other work on the machine
// meanwhile. --wait-quiet S: before each repetition, wait up to S seconds for other work to keep
// fewer than --quiet-cores cores busy (default 0: no waiting; the load is written beside the figures).
// --smoke (bench/shared/args.ts): 24 generated JPEGs in row groups of 8, batches of 8, 1 repetition,
// 60 kB of text, a stream file of the 24 images 8 times over; every side still runs (PyTorch
// included), and the report goes under test-results/bench-smoke/.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname } from 'node:path';
import process from 'node:process';
import { cacheDir } from '../src/runtime/index.ts';
import { ensureSyntheticFolder, listImageFolder } from '../src/sources/index.ts';
import { busyCores, runWatched, type Watched } from './loader/proc.ts';
import { nodeChild } from './text/node-build.ts';
import { serveRanges } from './parquet/server.ts';
import { writeImageParquet, writeTextParquet } from './parquet/write.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { corpusFolder, corpusMix, readCorpusManifest } from './shared/corpus.ts';
import { describeMachine, machineLines, machineLoad } from './shared/machine.ts';
import { fixed, median, spread } from './shared/stats.ts';
import { realText, trainedTokenizer } from './text/corpus.ts';

const args = benchArgs('parquet', {
  corpus: { type: 'string', help: "an ImageNet-style folder (default: bench/loader.ts's photo corpus; --smoke: 24 generated JPEGs)" },
  images: { type: 'number', default: 0, help: 'the first N images of the listing (0: all)' },
  reps: { type: 'number', default: 5, smoke: 1 },
  'row-group': { type: 'number', default: 256, smoke: 8, help: 'rows per row group of the image file' },
  'delay-ms': { type: 'number', default: 20, help: 'added before every HTTP answer' },
  batch: { type: 'number', default: 32, smoke: 8 },
  threads: { type: 'number', default: 2, help: "Tandem's decode threads" },
  workers: { type: 'number', default: 2, help: "the DataLoader's workers and Tandem's tokenizer workers" },
  'no-node': { type: 'boolean' },
  'stream-gb': { type: 'number', default: 2, smoke: 0, help: 'the large file, GB (10^9 bytes); 0: the corpus 8 times over' },
  'stream-batch': { type: 'number', default: 8 },
  'stream-size': { type: 'number', default: 32 },
  'text-bytes': { type: 'number', default: 2_000_000, smoke: 60_000, help: 'held-out real text read (bench/text/corpus.ts)' },
  merges: { type: 'number', default: 2000, smoke: 200 },
  seq: { type: 'number', default: 256 },
  'text-batch': { type: 'number', default: 8 },
  'text-group': { type: 'number', default: 1024, smoke: 64, help: 'documents per row group of the text file' },
  'wait-quiet': { type: 'number', default: 0, help: 'seconds to wait for a quiet machine before each repetition' },
  'quiet-cores': { type: 'number', default: 0.15 },
  out: { type: 'string', help: 'the report (default docs/bench/parquet.md)' },
});
const { smoke, argv } = args;
const v = args.values;
const reps = v.reps;
const outPath = v.out ?? (smoke ? smokeOut('bench-parquet.md') : 'docs/bench/parquet.md');
const command = ['npx deno run -A bench/parquet.ts', ...argv].join(' ');
const root = new URL('../', import.meta.url).pathname.replace(/\/$/, '');
const cache = cacheDir();
const work = `${cache}/bench/parquet`;
const PYTHON = process.env.TANDEM_PYTHON ?? '/usr/bin/python3';
const log = (s: string) => console.error(`[bench:parquet] ${s}`);
const sh = (cmd: string, a: string[]): string => {
  const r = spawnSync(cmd, a, { encoding: 'utf8', cwd: root });
  return r.status === 0 ? r.stdout.trim() : '';
};
const f0 = (x: number) => fixed(x, 0, '—');
const f2 = (x: number) => fixed(x, 2, '—');
const range = (xs: number[]) => {
  const s = spread(xs);
  return `${f2(s.median)} (${f2(s.min)}–${f2(s.max)})`;
};
const problems: string[] = [];
const notes: string[] = [];

log(`command: ${command}`);
const machine = describeMachine();
const loadAtStart = machineLoad();
const commitAtStart = sh('git', ['rev-parse', '--short', 'HEAD']);
log(`machine: ${machine.line}`);
log(`uptime: ${loadAtStart}`);
const t00 = performance.now();

// ---- the corpus and its Parquet file -----------------------------------------------------------
let corpus = v.corpus;
if (!corpus && smoke) {
  corpus = `${cache}/datasets/synthetic-s0-n24`;
  const { created } = await ensureSyntheticFolder(corpus, { count: 24 });
  log(`smoke corpus: ${corpus}${created ? ' (generated)' : ''}`);
} else if (!corpus) {
  // bench/loader.ts's default corpus, made the way it makes it (the same JPEGs, the same cache).
  const setup = spawnSync('bash', ['scripts/setup-bench.sh'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (setup.status !== 0) throw new Error('scripts/setup-bench.sh failed (see above)');
  corpus = corpusFolder(cache, 'photos');
  const made = spawnSync(
    PYTHON,
    [
      'bench/corpus/make-photo-corpus.py',
      ...['--sources', `${cache}/photo-sources/mate-backgrounds`, '--out', corpus, '--count', '2000', '--seed', '0', '--shape', 'photos'],
    ],
    { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  if (made.status !== 0) throw new Error('bench/corpus/make-photo-corpus.py failed (see above)');
}
const manifest = readCorpusManifest(corpus);
const listing = await listImageFolder(corpus);
const files = v.images > 0 ? listing.files.slice(0, v.images) : listing.files;
const imageFile = writeImageParquet(work, corpus, files, listing.classes, v['row-group']);
const corpusBytes = files.reduce((s, f) => s + readFileSync(f.path).length, 0);
log(
  `corpus: ${files.length} images, ${(corpusBytes / 2 ** 20).toFixed(1)} MiB → ${imageFile.path} (${(imageFile.bytes / 2 ** 20).toFixed(1)} MiB, ` +
    `${imageFile.rowGroups} row groups${imageFile.cached ? ', cached' : `, written in ${imageFile.seconds.toFixed(1)} s`})`,
);

// ---- the large file, after a look at the disk -------------------------------------------------
mkdirSync(work, { recursive: true });
const freeBytes = Number(sh('df', ['-Pk', work]).split('\n')[1]?.split(/\s+/)[3] ?? 0) * 1024;
let streamGb = v['stream-gb'];
if (streamGb > 0 && freeBytes < 10e9) {
  notes.push(`The disk had ${(freeBytes / 1e9).toFixed(1)} GB free (< 10 GB): the large file is 1 GB instead of ${streamGb} GB.`);
  streamGb = Math.min(streamGb, 1);
}
const repeat = streamGb > 0 ? Math.ceil((streamGb * 1e9) / imageFile.bytes) : 8;
const streamFile = writeImageParquet(work, corpus, files, listing.classes, v['row-group'], repeat);
log(
  `disk: ${(freeBytes / 1e9).toFixed(1)} GB free; large file: ${streamFile.path} (${(streamFile.bytes / 1e9).toFixed(2)} GB, ${streamFile.rows} rows, ` +
    `${streamFile.rowGroups} row groups${streamFile.cached ? ', cached' : `, written in ${streamFile.seconds.toFixed(1)} s`})`,
);

// ---- the text: bench/text.ts's documents and tokenizer, as Parquet, in memory and as files ------
const real = realText(v['text-bytes'], 1);
const trainTexts: string[] = [];
for (let i = 0, bytes = 0; i < real.documents.length && bytes < Math.min(300_000, v['text-bytes'] / 2); i += 4) {
  trainTexts.push(real.documents[i] ?? '');
  bytes += trainTexts[trainTexts.length - 1]?.length ?? 0;
}
const bpe = trainedTokenizer(`${cache}/bench/text`, trainTexts, v.merges);
const textFile = writeTextParquet(work, real.documents, v['text-group']);
const docsJson = `${work}/docs-${process.pid}.json`;
writeFileSync(docsJson, JSON.stringify(real.documents));
const textDir = `${work}/text-files-${process.pid}`;
mkdirSync(textDir, { recursive: true });
for (const [i, d] of real.documents.entries()) writeFileSync(`${textDir}/doc-${String(i).padStart(7, '0')}.txt`, d);
log(
  `text: ${real.documents.length} documents, ${(real.bytes / 1e6).toFixed(2)} MB → ${textFile.path} (${textFile.rowGroups} row groups); tokenizer ${bpe.path} (${bpe.merges} merges)`,
);

// ---- the HTTP server and the Node child -------------------------------------------------------
const server = await serveRanges({ 'images.parquet': imageFile.path }, v['delay-ms']);
const url = `${server.base}/images.parquet`;
const node = v['no-node'] ? undefined : await nodeChild(root, cache, 'parquet');
const nodeVersion = node ? sh('node', ['--version']) : '';
if (node) log(`node ${nodeVersion}: ${node.child}${node.built ? ' (transpiled now)' : ''}`);

// ---- the runs ---------------------------------------------------------------------------------
interface Report {
  images?: number;
  tokens?: number;
  rows?: number;
  hash?: number;
  failures?: number;
  checksum?: number;
  seconds: number;
  firstBatchSeconds: number;
  cpuSeconds: number;
  rss?: { images: number; rssKb: number }[];
}
interface Sample {
  report: Report;
  proc: Watched;
  requests?: number;
}
interface Side {
  id: string;
  name: string;
  run(): Promise<Sample>;
}

function parseLast(w: Watched, what: string): Report {
  const line = w.stdout.trim().split('\n').pop() ?? '';
  if (w.code !== 0 || !line.startsWith('{'))
    throw new Error(`${what} failed (exit ${w.code}):\n${w.stderr.slice(-3000)}\n${w.stdout.slice(-1000)}`);
  const stderr = w.stderr.trim();
  if (stderr) log(`${what} said: ${stderr.split('\n').slice(-3).join(' | ')}`);
  return JSON.parse(line) as Report;
}
const deno = process.execPath;
const runtimes = [
  { name: 'Deno', command: deno, head: ['run', '-A', `${root}/bench/parquet/child.ts`] },
  ...(node ? [{ name: 'Node', command: 'node', head: [node.child] }] : []),
];
const child = (id: string, name: string, rt: (typeof runtimes)[number], tail: string[], http = false): Side => ({
  id,
  name,
  async run() {
    const before = server.counts().requests;
    const proc = await runWatched(rt.command, [...rt.head, ...tail], { cwd: root });
    return { proc, report: parseLast(proc, name), ...(http ? { requests: server.counts().requests - before } : {}) };
  },
});
const imageTail = ['--mode', 'images', '--batch', `${v.batch}`, '--threads', `${v.threads}`, '--size', '224'];
const imageSides: Side[] = [];
for (const rt of runtimes) {
  const r = rt.name.toLowerCase();
  imageSides.push(
    child(`${r}-folder`, `Tandem, folder (${rt.name})`, rt, [...imageTail, '--source', corpus, '--images', `${files.length}`]),
    child(`${r}-parquet`, `Tandem, Parquet on disk (${rt.name})`, rt, [...imageTail, '--source', `parquet:${imageFile.path}`]),
    child(
      `${r}-http`,
      `Tandem, Parquet over HTTP +${v['delay-ms']} ms (${rt.name})`,
      rt,
      [...imageTail, '--source', `parquet:${url}`],
      true,
    ),
  );
}
imageSides.push({
  id: 'torch',
  name: `PyTorch DataLoader, folder (${v.workers} workers)`,
  async run() {
    const a = ['bench/loader/torch_loader.py', '--corpus', corpus, '--images', `${files.length}`, '--batch', `${v.batch}`];
    const proc = await runWatched(PYTHON, [...a, '--workers', `${v.workers}`, '--transform', 'cover'], { cwd: root });
    return { proc, report: parseLast(proc, 'torch_loader.py') };
  },
});
const textTail = ['--mode', 'text', '--tokenizer', bpe.path, '--eos', `${bpe.eos}`, '--seq', `${v.seq}`, '--batch', `${v['text-batch']}`];
const textSides: Side[] = [];
for (const rt of runtimes) {
  const r = rt.name.toLowerCase();
  const tail = [...textTail, '--workers', `${v.workers}`];
  textSides.push(
    child(`${r}-text-parquet`, `textLoader, Parquet (${rt.name})`, rt, [...tail, '--source', `parquet:${textFile.path}`]),
    child(`${r}-text-texts`, `textLoader, { texts } in memory (${rt.name})`, rt, [...tail, '--source', `texts:${docsJson}`]),
    child(`${r}-text-files`, `textLoader, text files (${rt.name})`, rt, [...tail, '--source', `folder:${textDir}`]),
  );
}

async function waitQuiet(label: string): Promise<void> {
  if (v['wait-quiet'] <= 0) return;
  const t0 = performance.now();
  for (;;) {
    const busy = await busyCores(2000);
    if (busy <= v['quiet-cores']) return;
    if ((performance.now() - t0) / 1000 >= v['wait-quiet']) return log(`other work keeps ${busy.toFixed(2)} cores busy; ${label} anyway`);
    log(`waiting for a quiet machine before ${label}: other work keeps ${busy.toFixed(2)} cores busy`);
    await new Promise((resolve) => setTimeout(resolve, 8000));
  }
}

const samples = new Map<string, Sample[]>();
const line = (s: Side, x: Sample) => {
  const r = x.report;
  const n = r.images ?? r.tokens ?? 0;
  const unit = r.images !== undefined ? 'img' : 'tok';
  return (
    `${s.name}: ${f0(n / r.seconds)} ${unit}/s, CPU ${((r.cpuSeconds / n) * 1000).toFixed(unit === 'img' ? 2 : 5)} ms/${unit}, ` +
    `peak RSS ${(x.proc.tree.peakRssKb / 1024).toFixed(0)} MiB, first batch ${(r.firstBatchSeconds * 1000).toFixed(0)} ms` +
    `${x.requests !== undefined ? `, ${x.requests} requests` : ''}; other work ${x.proc.foreignCores.toFixed(2)} cores`
  );
};
const all = [...imageSides, ...textSides];
log('warm-up: each side once, untimed (page cache, compile caches)');
const warm = new Map<string, Sample>();
for (const s of all) {
  const x = await s.run();
  warm.set(s.id, x);
  log(`  ${line(s, x)}`);
}
const repLoads: string[] = [];
for (let rep = 0; rep < reps; rep++) {
  const order = rep % 2 === 0 ? all : [...all].reverse();
  await waitQuiet(`repetition ${rep + 1}`);
  log(`repetition ${rep + 1}/${reps}`);
  for (const s of order) {
    const x = await s.run();
    samples.set(s.id, [...(samples.get(s.id) ?? []), x]);
    log(`  ${line(s, x)}`);
  }
  repLoads.push(loadavg()[0]?.toFixed(2) ?? '?');
}

// The large file: once per runtime.
const streamRuns: { name: string; sample: Sample }[] = [];
for (const rt of runtimes) {
  const every = Math.max(1, Math.round(streamFile.rows / v['stream-batch'] / 200));
  const s = child(`${rt.name}-stream`, `Tandem, large Parquet file (${rt.name})`, rt, [
    ...['--mode', 'stream', '--source', `parquet:${streamFile.path}`, '--batch', `${v['stream-batch']}`],
    ...['--size', `${v['stream-size']}`, '--threads', `${v.threads}`, '--every', `${every}`],
  ]);
  const x = await s.run();
  streamRuns.push({ name: s.name, sample: x });
  log(`  ${line(s, x)}`);
}
await server.close();
const benchSeconds = (performance.now() - t00) / 1000;
const loadAtEnd = machineLoad();
const commitAtEnd = sh('git', ['rev-parse', '--short', 'HEAD']);
log(`uptime: ${loadAtEnd}`);

// ---- checks -----------------------------------------------------------------------------------
const get = (id: string) => samples.get(id) ?? [];
for (const s of imageSides)
  for (const x of get(s.id))
    if (x.report.images !== files.length || (x.report.failures ?? 0) > 0)
      problems.push(`${s.name}: ${x.report.images} images delivered, ${x.report.failures ?? 0} failed, of ${files.length}`);
// Tandem's sides decode the same images the same way: the same bytes sampled from every batch.
const sums = new Set(imageSides.flatMap((s) => (s.id === 'torch' ? [] : get(s.id).map((x) => x.report.checksum))));
if (sums.size > 1) problems.push(`Tandem's sides delivered different pixels (checksums ${[...sums].join(', ')})`);
const textRef = get(textSides[0]?.id ?? '')[0]?.report;
for (const s of textSides)
  for (const x of get(s.id))
    if (textRef && (x.report.tokens !== textRef.tokens || x.report.hash !== textRef.hash))
      problems.push(
        `${s.name}: ${x.report.tokens} tokens (hash ${x.report.hash}), ${textSides[0]?.name}: ${textRef.tokens} (${textRef.hash})`,
      );
for (const { name, sample } of streamRuns)
  if (sample.report.images !== streamFile.rows) problems.push(`${name}: ${sample.report.images} of ${streamFile.rows} rows delivered`);

// ---- figures ----------------------------------------------------------------------------------
type Per = { rate: number; cpuMs: number; rssMiB: number; firstMs: number; foreign: number; requests: number };
const per = (x: Sample): Per => {
  const n = x.report.images ?? x.report.tokens ?? Number.NaN;
  return {
    rate: n / x.report.seconds,
    cpuMs: (x.report.cpuSeconds / n) * 1000,
    rssMiB: x.proc.tree.peakRssKb / 1024,
    firstMs: x.report.firstBatchSeconds * 1000,
    foreign: x.proc.foreignCores,
    requests: x.requests ?? Number.NaN,
  };
};
const med = (id: string, k: keyof Per) => median(get(id).map((x) => per(x)[k]));
const paired = (a: string, b: string, k: keyof Per) => {
  const xs = get(a);
  const ys = get(b);
  return xs.map((x, i) => per(x)[k] / per(ys[i] as Sample)[k]);
};
const ratioRows: string[] = ['| ratio | median (range over repetitions) | goal |', '|---|---|---|'];
const ratio = (what: string, a: string, b: string, k: keyof Per, goal = '') => {
  if (!samples.has(a) || !samples.has(b)) return;
  ratioRows.push(`| ${what} | ${range(paired(a, b, k))} | ${goal} |`);
};
for (const rt of runtimes) {
  const r = rt.name.toLowerCase();
  const goalMet = (xs: number[]) => (median(xs) >= 0.95 ? '≥ 0.95: met' : '≥ 0.95: short');
  ratio(
    `${rt.name}: Parquet ÷ folder, images/s`,
    `${r}-parquet`,
    `${r}-folder`,
    'rate',
    goalMet(paired(`${r}-parquet`, `${r}-folder`, 'rate')),
  );
  ratio(`${rt.name}: Parquet ÷ folder, CPU per image`, `${r}-parquet`, `${r}-folder`, 'cpuMs');
  ratio(`${rt.name}: Parquet ÷ folder, peak RSS`, `${r}-parquet`, `${r}-folder`, 'rssMiB');
  ratio(`${rt.name}: Parquet ÷ DataLoader (folder), images/s`, `${r}-parquet`, 'torch', 'rate');
  ratio(`${rt.name}: Parquet ÷ DataLoader, CPU per image`, `${r}-parquet`, 'torch', 'cpuMs');
  ratio(`${rt.name}: Parquet ÷ DataLoader, peak RSS of the process tree`, `${r}-parquet`, 'torch', 'rssMiB');
  ratio(`${rt.name}: folder ÷ DataLoader, images/s (bench/loader.ts's figure, for reference)`, `${r}-folder`, 'torch', 'rate');
  ratio(`${rt.name}: Parquet over HTTP +${v['delay-ms']} ms ÷ Parquet on disk, images/s`, `${r}-http`, `${r}-parquet`, 'rate');
  ratio(`${rt.name}: Parquet over HTTP ÷ on disk, time to first batch`, `${r}-http`, `${r}-parquet`, 'firstMs');
}
const textRatioRows: string[] = ['| ratio, tokens/s | median (range over repetitions) |', '|---|---|'];
for (const rt of runtimes) {
  const r = rt.name.toLowerCase();
  for (const [what, b] of [
    ['{ texts } in memory', `${r}-text-texts`],
    ['text files', `${r}-text-files`],
  ] as const)
    if (samples.has(b)) textRatioRows.push(`| ${rt.name}: Parquet ÷ ${what} | ${range(paired(`${r}-text-parquet`, b, 'rate'))} |`);
}

const table = (sides: Side[], unit: 'images' | 'tokens') => {
  const head =
    unit === 'images'
      ? '| side | images/s | CPU ms/image | peak RSS MiB (tree) | first batch ms | HTTP requests | other work, cores |'
      : '| side | k tokens/s | CPU ms / 1k tokens | peak RSS MiB (tree) | first batch ms | | other work, cores |';
  const rows = [head, '|---|---|---|---|---|---|---|'];
  for (const s of sides) {
    if (!samples.has(s.id)) continue;
    const k = unit === 'images' ? 1 : 1000;
    rows.push(
      `| ${s.name} | ${fixed(med(s.id, 'rate') / k, unit === 'images' ? 0 : 1)} | ${f2(med(s.id, 'cpuMs') * k)} | ${f0(med(s.id, 'rssMiB'))} | ` +
        `${f0(med(s.id, 'firstMs'))} | ${Number.isNaN(med(s.id, 'requests')) ? '' : f0(med(s.id, 'requests'))} | ${f2(med(s.id, 'foreign'))} |`,
    );
  }
  return rows;
};

const repRows = ['| repetition | ' + all.map((s) => s.name).join(' | ') + ' |', `|---|${all.map(() => '---|').join('')}`];
for (let k = 0; k < reps; k++)
  repRows.push(
    `| ${k + 1}${k % 2 ? ' (reversed)' : ''} | ${all
      .map((s) => {
        const x = get(s.id)[k];
        if (!x) return '';
        const p = per(x);
        return `${fixed(p.rate / (x.report.images !== undefined ? 1 : 1000), 0)} · ${(p.cpuMs * (x.report.images !== undefined ? 1 : 1000)).toFixed(2)} · ${p.rssMiB.toFixed(0)} · ${p.firstMs.toFixed(0)} · ${p.foreign.toFixed(2)}`;
      })
      .join(' | ')} |`,
  );

const streamRows = [
  '| runtime | file | rows (row groups) | images/s | peak RSS of the process, MiB (tree) | peak ÷ file size | RSS at 0 / 25 / 50 / 75 / 100% of the rows, MiB | max RSS over the last half ÷ over the first half | other work, cores |',
  '|---|---|---|---|---|---|---|---|---|',
];
for (const { name, sample } of streamRuns) {
  const r = sample.report;
  const rss = r.rss ?? [];
  const at = (q: number) => {
    const want = q * (r.images ?? 0);
    const hit = rss.find((p) => p.images >= want) ?? rss[rss.length - 1];
    return hit ? (hit.rssKb / 1024).toFixed(0) : '—';
  };
  const half = (r.images ?? 0) / 2;
  const maxOf = (xs: typeof rss) => Math.max(...xs.map((p) => p.rssKb));
  const drift = maxOf(rss.filter((p) => p.images > half)) / maxOf(rss.filter((p) => p.images > 0 && p.images <= half));
  const peak = sample.proc.tree.peakRssKb * 1024;
  streamRows.push(
    `| ${name} | ${(streamFile.bytes / 1e9).toFixed(2)} GB | ${streamFile.rows} (${streamFile.rowGroups}) | ${f0((r.images ?? 0) / r.seconds)} | ` +
      `${(peak / 2 ** 20).toFixed(0)} | ${(peak / streamFile.bytes).toFixed(3)} | ${[0, 0.25, 0.5, 0.75, 1].map(at).join(' / ')} | ${f2(drift)} | ${f2(sample.proc.foreignCores)} |`,
  );
}

// ---- report -----------------------------------------------------------------------------------
const dirty = sh('git', ['status', '--porcelain', '--', 'src', 'wasm'])
  .split('\n')
  .filter(Boolean)
  .map((l) => l.replace(/^\s*\S+\s+/, ''));
const torchVersions = (warm.get('torch')?.report as { versions?: Record<string, string> } | undefined)?.versions ?? {};
const firstDeno = warm.get('deno-http');
const otherWork = median([...samples.values()].flat().map((x) => x.proc.foreignCores));
// The next row group read ahead (the ShardStream `prefetch` hint) came with be32ac5: say which the tree had.
const readAhead = readFileSync(`${root}/src/loader/parquet.ts`, 'utf8').includes('prefetch');
const md = `# Parquet sources: images, HTTP, text and memory

\`\`\`sh
${command}
\`\`\`

Written by \`bench/parquet.ts\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${reps} interleaved repetition${reps === 1 ? '' : 's'}
(the order reversed every other one), medians with the range over the repetitions; ${(benchSeconds / 60).toFixed(1)} min in all.
${smoke ? '\n**Smoke run**: tiny generated inputs, one repetition; the figures mean nothing.\n' : ''}
${machineLines(loadAtStart, loadAtEnd, machine).join('\n')}
- 1-minute load after each repetition: ${repLoads.join(', ')}.
- \`/proc/cpuinfo\` flags line: ${cpuFlagsNote()}
- Tandem at ${commitAtStart}${commitAtEnd !== commitAtStart ? ` (HEAD moved to ${commitAtEnd} during the run)` : ''}${dirty.length ? `, with uncommitted changes in ${dirty.join(', ')} (the working tree was measured)` : ''}: the Parquet source ${readAhead ? 'reads the next row group ahead while one is decoded (the ShardStream `prefetch` hint, src/loader/parquet.ts)' : '**no read-ahead of the next row group** (src/loader/parquet.ts has no `prefetch`)'}.
- Deno ${(process.versions as Record<string, string | undefined>).deno ?? '?'}${node ? `, Node ${nodeVersion}` : ''}; Python ${torchVersions.python ?? '?'}, torch ${torchVersions.torch ?? '?'}, torchvision ${torchVersions.torchvision ?? '?'}, PIL ${torchVersions.pil ?? '?'}.
${smoke ? '' : `\nThe machine is shared: read the ratios, not the absolute figures, and only beside the load above.${otherWork > 0.3 ? ` **Provisional**: other work kept ${otherWork.toFixed(2)} cores busy during the median run (of ${machine.cores}); rerun on a quiet machine (\`--wait-quiet 300\`).` : ''}\n`}
## The data

- Images: \`${corpus}\`, ${files.length} JPEGs in ${listing.classes.length} classes, ${(corpusBytes / 2 ** 20).toFixed(1)} MiB.${manifest ? ` The whole corpus: ${corpusMix(manifest)[0]}` : ''}
- Their Parquet file (\`bench/parquet/write.ts\`, hyparquet-writer, snappy): the Hub's shape, an \`image\` struct \`{ bytes, path }\` and an
  INT64 \`label\` whose ClassLabel names are in the \`huggingface\` metadata; the folder's listing order; ${v['row-group']} rows per row group:
  ${imageFile.rowGroups} row groups, ${(imageFile.bytes / 2 ** 20).toFixed(1)} MiB.
- The large file: the same rows ${repeat} times over, ${streamFile.rows} rows in ${streamFile.rowGroups} row groups, ${(streamFile.bytes / 1e9).toFixed(2)} GB (disk: ${(freeBytes / 1e9).toFixed(0)} GB free before).
- Text: ${real.documents.length} documents, ${(real.bytes / 1e6).toFixed(2)} MB of this machine's own text (bench/text/corpus.ts, as bench/text.ts), each paragraph
  a document; as Parquet (one UTF8 \`text\` column, ${v['text-group']} rows per row group, ${textFile.rowGroups} row groups), as \`{ texts }\` (read from JSON
  before the timer), and as ${real.documents.length} \`.txt\` files in one folder. Tokenizer: a byte-level BPE tokenizer.json with ${bpe.merges} merges
  (bench/text.ts's), ${v.workers} tokenizer workers, \`pack: 'best-fit'\`, seqLen ${v.seq}, batches of ${v['text-batch']}, EOS ${bpe.eos}.
${notes.map((n) => `- ${n}`).join('\n')}

## 1–2. Images: Parquet against the folder and PyTorch's DataLoader; Parquet over HTTP

The job, every side: Resize(224) + CenterCrop(224) to RGB u8, batches of ${v.batch}, every batch touched and dropped
(\`bench/loader.ts\`'s job). Tandem: \`loader(src, { batchSize: ${v.batch}, size: 224, transform: 'cover', threads: ${v.threads}, readConcurrency: 16 })\`
with \`src\` the folder (its first ${files.length} files) or \`{ parquet: [path or URL] }\`. PyTorch: \`bench/loader/torch_loader.py\`,
ImageFolder + DataLoader(${v.workers} workers). HTTP: the same file from a server on 127.0.0.1 in the benchmark's own process
(\`bench/parquet/server.ts\`: Range requests, ${v['delay-ms']} ms added before every answer; its CPU is not the loader's).

${table(imageSides, 'images').join('\n')}

${ratioRows.join('\n')}

- **images/s**: images ÷ the timed seconds, from the first pull to the last batch. Untimed: importing, \`await loader.classes()\`
  (lists the folder, or opens the file and reads its footer — one request over HTTP — and starts the decode pool); the
  DataLoader's workers are forked inside its timed part, as in bench/loader.ts.
- **CPU ms/image**: the timed part's CPU (user + system, every thread; the DataLoader's workers included, reaped).
- **peak RSS (tree)**: the largest sum of RSS over the child's process tree, sampled every 50 ms over its whole life.
- **first batch**: from the first pull to the first batch in hand. A Parquet source reads a whole row group (${v['row-group']}
  rows, about ${(imageFile.bytes / imageFile.rowGroups / 2 ** 20).toFixed(0)} MiB) before its first row.
- **HTTP requests**: answered by the server during the run (the footer's probe included). The server's own file reads
  are the benchmark's CPU, not the loader's: the HTTP side's CPU per image lacks the local read the disk side pays.${
    firstDeno?.requests !== undefined ? ` The warm-up's Deno run made ${firstDeno.requests}.` : ''
  }

## 3. Text: textLoader over Parquet against the same documents in memory and as files

${table(textSides, 'tokens').join('\n')}

${textRatioRows.join('\n')}

- tokens/s: non-padding positions of the batches ÷ the wall time from making the loader to its last batch. Every side
  delivered the same tokens and the same packing (a hash of each row's first id), or it is listed under Problems.

## 4. Memory while streaming a large Parquet file

\`loader({ parquet: [file] }, { batchSize: ${v['stream-batch']}, size: ${v['stream-size']}, threads: ${v.threads} })\` to 'cpu', every batch
touched and released; RSS (VmRSS of the process) read every few batches; peak RSS of the process tree from the parent's sampling.
Once per runtime, after the repetitions.

${streamRows.join('\n')}

## Not measured

- hyparquet on the main thread with \`createImageBitmap\` in Chromium (a browser-only peer): not measured here.
${problems.length ? `\n## Problems\n\n${problems.map((p) => `- ${p}`).join('\n')}\n` : ''}
## Every repetition

Each cell: rate (images/s or k tokens/s) · CPU ms per image (per 1k tokens) · peak RSS MiB · first batch ms · other work, cores.

${repRows.join('\n')}
`;

function cpuFlagsNote(): string {
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    const model = /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? '?';
    const flags = /^flags\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? '?';
    return `model name \`${model}\`; \`${flags}\``;
  } catch {
    return 'no /proc/cpuinfo';
  }
}

mkdirSync(dirname(outPath), { recursive: true });
writeFileSync(outPath, md);
for (const p of [docsJson]) spawnSync('rm', ['-f', p]);
spawnSync('rm', ['-rf', textDir]);
log(`wrote ${outPath} (${benchSeconds.toFixed(0)} s)`);
console.log(
  [...table(imageSides, 'images'), '', ...ratioRows, '', ...table(textSides, 'tokens'), '', ...textRatioRows, '', ...streamRows].join('\n'),
);
if (problems.length) {
  for (const p of problems) console.error(`[bench:parquet] problem: ${p}`);
  process.exit(1);
}
const pq = paired('deno-parquet', 'deno-folder', 'rate');
const http = paired('deno-http', 'deno-parquet', 'rate');
args.done(
  `Parquet ÷ folder ${f2(median(pq))}, HTTP ÷ disk ${f2(median(http))}, Parquet ÷ DataLoader ${f2(median(paired('deno-parquet', 'torch', 'rate')))} (Deno); ` +
    `stream peak RSS ${streamRuns.map((s) => `${(s.sample.proc.tree.peakRssKb / 1024).toFixed(0)} MiB`).join(', ')} for ${(streamFile.bytes / 2 ** 20).toFixed(0)} MiB`,
);
