// Tandem's image loader against PyTorch's DataLoader on real photographs, side by side in one
// run: interleaved repetitions (the order reversed every repetition), medians.
//
//   npx deno run -A bench/loader.ts [--corpus DIR] [--images N] [--reps 5] [--threads 2] [--workers 2]
//                                   [--batch 32] [--no-node] [--ref-images 8] [--ref-seconds 4]
//                                   [--wait-quiet 300] [--quiet-cores 0.15] [--max-other 0.2] [--retries 3]
//                                   [--shape photos|imagenet|hard] [--transform cover|rrc]
//                                   [--out docs/bench/loader[-imagenet|-hard][-rrc].md] [--smoke]
//                                   [--baseline DIR]
//
// Each loader runs as a child process of its own, so its CPU time and memory are its own:
//   - Tandem in Deno (bench/loader/tandem-child.ts) and in Node (the same file, transpiled, on the
//     built dist/): list the folder, read files (16 in flight), decode on --threads wasm pthreads
//     into RGB 224×224 (fit 'cover'), u8 batches of --batch, consumed and released;
//     each runtime twice, through the hand-wired pipeline and through loader() (--api loader), so
//     the front door's cost is a ratio of the same run;
//   - PyTorch (bench/loader/torch_loader.py, Debian's python3-torch/torchvision): ImageFolder +
//     Resize(224) + CenterCrop(224) + PILToTensor, DataLoader(batch_size, num_workers, shuffle=False);
//     and the same with each JPEG opened through PIL's draft() (DCT-domain downscale), a second peer.
// --transform rrc: the training transform instead, RandomResizedCrop(224) + RandomHorizontalFlip()
// (Tandem: ImageBatcher's randomCrop, drawn in the decoder); the draft() peer does not apply there.
// --shape imagenet: the default corpus is cut to ImageNet's sizes (500×375, 500×333, ...);
// --shape hard: high-detail crops near the photographs' own resolution, 300×200 to 800×600,
// quality 90–95, a quarter 4:4:4 (bench/corpus/make-photo-corpus.py says how each is made).
// The parent samples each child's whole process tree from /proc every 50 ms (summed RSS and PSS,
// CPU); the children report their own timed wall and CPU seconds and time to first batch.
// --baseline DIR: a checkout of another commit (its own src/, with wasm/dist/ and node_modules/ in
// place); its Deno children run beside this tree's in the same repetitions, and the report gives
// this tree ÷ that one, so a change's cost or gain is measured on one machine in one run.
// Native reference: tjbench (libjpeg-turbo-progs) decompressing --ref-images typical corpus images
// on one core, against the same images decoded at full size by Tandem's wasm pool on 1 thread.
// Machines are shared: before the warm-up and before each repetition it waits (up to --wait-quiet
// seconds) until other work keeps fewer than --quiet-cores cores busy; it measures, per child run,
// how many cores other work kept busy meanwhile, and a run disturbed by more than --max-other
// cores is discarded and run again (at most --retries times).
//
// Without --corpus it sets up (scripts/setup-bench.sh) and uses the photo corpus: 2000 JPEGs cut
// from Debian's mate-backgrounds photographs by bench/corpus/make-photo-corpus.py (seed 0), kept
// under the cache directory. Any ImageNet-style folder (root/<class>/<image>) works with --corpus.
// --smoke (bench/shared/args.ts): without --corpus, 24 generated 500×375 JPEGs in 4 classes instead
// (no download), batches of 8, 1 repetition, 2 reference images for 0.5 s, no waiting for a quiet
// machine and no retries; every peer still runs (scripts/setup.sh installs them), and the report
// goes under test-results/bench-smoke/.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname } from 'node:path';
import process from 'node:process';
import { cacheDir } from '../src/runtime/index.ts';
import { ensureSyntheticFolder, listImageFolder } from '../src/sources/index.ts';
import { jpegHeader } from './loader/jpeg.ts';
import { busyCores, runWatched, type Watched } from './loader/proc.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { CORPUS_SHAPES, corpusFolder, corpusMix, corpusRecipe, isCorpusShape, readCorpusManifest } from './shared/corpus.ts';
import { describeMachine, machineLines, machineLoad } from './shared/machine.ts';
import { fixed as fixedOr, median, spread } from './shared/stats.ts';

// ---- arguments --------------------------------------------------------------------------------
const args = benchArgs('loader', {
  corpus: { type: 'string', help: 'an ImageNet-style folder (default: the photo corpus; --smoke: 24 generated JPEGs)' },
  images: { type: 'number', default: 0, help: 'the first N images of the listing (0: all)' },
  reps: { type: 'number', default: 5, smoke: 1 },
  threads: { type: 'number', default: 2 },
  workers: { type: 'number', default: 2 },
  batch: { type: 'number', default: 32, smoke: 8 },
  'no-node': { type: 'boolean' },
  baseline: { type: 'string', help: 'a checkout of another commit whose Deno children run beside this tree’s' },
  'ref-images': { type: 'number', default: 8, smoke: 2 },
  'ref-seconds': { type: 'number', default: 4, smoke: 0.5 },
  'wait-quiet': { type: 'number', default: 300, smoke: 0 },
  'quiet-cores': { type: 'number', default: 0.15 },
  'max-other': { type: 'number', default: 0.2 },
  retries: { type: 'number', default: 3, smoke: 0 },
  shape: {
    type: 'string',
    default: 'photos',
    help: "the default corpus: 'photos' (the project's mix), 'imagenet' (ImageNet's sizes) or 'hard' (high-detail crops, quality 90–95, more 4:4:4)",
  },
  transform: { type: 'string', default: 'cover', help: "'cover' (Resize + CenterCrop) or 'rrc' (RandomResizedCrop + flip)" },
  out: { type: 'string', help: 'the report (default docs/bench/loader[-imagenet|-hard][-rrc].md)' },
});
const { smoke, argv } = args;
const reps = args.values.reps;
const threads = args.values.threads;
const workers = args.values.workers;
const batch = args.values.batch;
const imageLimit = args.values.images;
const refCount = args.values['ref-images'];
const refSeconds = args.values['ref-seconds'];
const withNode = !args.values['no-node'];
const quietCores = args.values['quiet-cores'];
const quietWait = args.values['wait-quiet'];
const maxOther = args.values['max-other'];
const retries = args.values.retries;
const shapeArg = args.values.shape;
const transform = args.values.transform;
if (!isCorpusShape(shapeArg)) throw new Error(`--shape wants ${CORPUS_SHAPES.join(', ')}, got ${shapeArg}`);
const shape = shapeArg;
if (transform !== 'cover' && transform !== 'rrc') throw new Error(`--transform wants cover or rrc, got ${transform}`);
const rrc = transform === 'rrc';
const reportName = `loader${shape === 'photos' ? '' : `-${shape}`}${rrc ? '-rrc' : ''}.md`;
const outPath = args.values.out ?? (smoke ? smokeOut(`bench-${reportName}`) : `docs/bench/${reportName}`);
const command = ['npx deno run -A bench/loader.ts', ...argv].join(' ');
const root = new URL('../', import.meta.url).pathname.replace(/\/$/, '');
const PYTHON = '/usr/bin/python3';
const log = (s: string) => console.error(`[bench:loader] ${s}`);

const sh = (cmd: string, args: string[]): string => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', cwd: root });
  return r.status === 0 ? r.stdout.trim() : '';
};
const fixed = (x: number, d: number) => fixedOr(x, d, '—');

// ---- machine state at the start -------------------------------------------------------------------
log(`command: ${command}`);
const machine = describeMachine();
const uptimeStart = machineLoad();
log(`machine: ${machine.line}`);
log(`uptime: ${uptimeStart}`);
if (loadavg()[0]! > 1)
  log(
    `note: 1-minute load average ${loadavg()[0]!.toFixed(2)} at start (it lags; the bench measures other work itself before each repetition)`,
  );
const wasmFile = `${root}/wasm/dist/tandem-decode.wasm`;
// Someone may rebuild the wasm module while this runs: every timed run notes the build it used.
let wasmSeen = { stamp: '', id: '' };
const wasmId = (): string => {
  const st = statSync(wasmFile);
  const stamp = `${st.mtimeMs}:${st.size}`;
  if (stamp !== wasmSeen.stamp) {
    wasmSeen = {
      stamp,
      id: `${createHash('sha256').update(readFileSync(wasmFile)).digest('hex').slice(0, 12)} (built ${st.mtime.toISOString().slice(0, 19)}Z)`,
    };
  }
  return wasmSeen.id;
};
const wasmBuilds = new Map<string, number>(); // build → timed runs kept with it

// ---- corpus -----------------------------------------------------------------------------------
let corpus = args.values.corpus;
if (!corpus && smoke) {
  // Tiny and generated: the smoke run needs no download (scripts/setup-bench.sh) and no photographs.
  corpus = `${cacheDir()}/datasets/synthetic-s0-n24`;
  const { created } = await ensureSyntheticFolder(corpus, { count: 24 });
  log(`smoke corpus: ${corpus}${created ? ' (generated)' : ''}`);
} else if (!corpus) {
  const setup = spawnSync('bash', ['scripts/setup-bench.sh'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (setup.status !== 0) throw new Error('scripts/setup-bench.sh failed (see above)');
  corpus = corpusFolder(cacheDir(), shape);
  const t0 = performance.now();
  const made = spawnSync(
    PYTHON,
    [
      'bench/corpus/make-photo-corpus.py',
      '--sources',
      `${cacheDir()}/photo-sources/mate-backgrounds`,
      '--out',
      corpus,
      '--count',
      '2000',
      '--seed',
      '0',
      '--shape',
      shape,
    ],
    { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  if (made.status !== 0) throw new Error('bench/corpus/make-photo-corpus.py failed (see above)');
  log(`corpus ready in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${corpus}`);
}
const manifest = readCorpusManifest(corpus);
const { files: allFiles, classes } = await listImageFolder(corpus);
const files = imageLimit > 0 ? allFiles.slice(0, imageLimit) : allFiles;
const corpusBytes = files.reduce((s, f) => s + statSync(f.path).size, 0);
log(`corpus: ${corpus}: ${files.length} images in ${classes.length} classes, ${(corpusBytes / 2 ** 20).toFixed(1)} MiB`);

// ---- the Node variant: the child transpiled, on the built dist/ ----------------------------------
let nodeChild: string | undefined;
let nodeVersion = '';
let distRebuilt = false;
if (withNode) {
  nodeVersion = sh('node', ['--version']);
  const key = sh('bash', ['scripts/source-key.sh']);
  const builtKey = existsSync(`${root}/dist/.build-key`) ? readFileSync(`${root}/dist/.build-key`, 'utf8').trim() : '';
  if (!key || key !== builtKey) {
    log('dist/ is missing or older than src/: npm run build');
    distRebuilt = true;
    const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    if (built.status !== 0) throw new Error('npm run build failed (see above)');
  }
  const { default: ts } = await import('typescript');
  const source = readFileSync(`${root}/bench/loader/tandem-child.ts`, 'utf8');
  const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  const dir = `${cacheDir()}/bench/loader-node`;
  mkdirSync(dir, { recursive: true });
  nodeChild = `${dir}/tandem-child-${createHash('sha256').update(js).digest('hex').slice(0, 12)}.mjs`;
  if (!existsSync(nodeChild)) writeFileSync(nodeChild, js);
  log(`node ${nodeVersion}: ${nodeChild} on ${root}/dist`);
}

// ---- the native reference's images ------------------------------------------------------------------
interface RefImage {
  path: string;
  width: number;
  height: number;
  bytes: number;
}
const refImages: RefImage[] = [];
for (let k = 0; k < refCount && files.length > 0; k++) {
  for (let i = Math.floor((k * files.length) / refCount); i < files.length; i++) {
    const path = files[i]!.path;
    if (refImages.some((r) => r.path === path)) continue;
    const bytes = readFileSync(path);
    const h = jpegHeader(bytes);
    // typical: baseline 4:2:0 colour, long side 400–560 px, no Exif
    if (
      !h ||
      h.progressive ||
      h.components !== 3 ||
      h.lumaSampling !== '2x2' ||
      h.exif ||
      Math.max(h.width, h.height) < 400 ||
      Math.max(h.width, h.height) > 560
    )
      continue;
    refImages.push({ path, width: h.width, height: h.height, bytes: bytes.length });
    break;
  }
}
log(`native reference: ${refImages.length} images (${refImages.map((r) => `${r.width}×${r.height}`).join(', ')})`);

// ---- variants ---------------------------------------------------------------------------------
interface LoaderReport {
  listed: number;
  images: number;
  failures: number;
  seconds: number;
  firstBatchSeconds: number;
  cpuSeconds: number;
  cpuTotalSeconds: number;
  peakRssKb: number;
  error?: string | null;
  runtime: string;
  version?: string;
  torchThreads?: number;
  workersAlive?: number;
  versions?: Record<string, string>;
}
interface LoaderSample {
  report: LoaderReport;
  proc: Watched;
}
interface RefSample {
  fps: number[];
  foreign: number;
}

function parseLast<T>(w: Watched, what: string): T {
  const line = w.stdout.trim().split('\n').pop() ?? '';
  if (w.code !== 0 || !line.startsWith('{')) {
    throw new Error(`${what} failed (exit ${w.code}):\n${w.stderr.slice(-3000)}\n${w.stdout.slice(-1000)}`);
  }
  const stderr = w.stderr.trim();
  if (stderr) log(`${what} said: ${stderr.split('\n').slice(-5).join(' | ')}`);
  return JSON.parse(line) as T;
}

const childArgs = ['--corpus', corpus, '--images', String(imageLimit), '--batch', String(batch), '--transform', transform];
/** The Tandem rows: each runtime through the hand-wired pipeline and through loader(). */
const baselineDir = args.values.baseline;
const baselineHead = baselineDir ? sh('git', ['-C', baselineDir, 'rev-parse', '--short', 'HEAD']) : '';
const tandemRuns = (runtime: 'Deno' | 'Node', api: 'wired' | 'loader', at?: string) => ({
  name: `Tandem${at ? ` at ${baselineHead}` : ''}${api === 'loader' ? ' via loader()' : ''}, ${runtime} (${threads} wasm threads)`,
  who: `Tandem${at ? ` at ${baselineHead}` : ''}${api === 'loader' ? ' via loader()' : ''} (${runtime})`,
  async run(): Promise<LoaderSample> {
    const tail = [...childArgs, '--threads', String(threads), '--api', api];
    const proc =
      runtime === 'Deno'
        ? await runWatched(process.execPath, ['run', '-A', 'bench/loader/tandem-child.ts', ...tail], { cwd: at ?? root })
        : await runWatched('node', [nodeChild ?? '', '--lib', `${root}/dist`, ...tail], { cwd: root });
    return { proc, report: parseLast<LoaderReport>(proc, `tandem-child (${runtime}, ${api})`) };
  },
});
const loaders: { name: string; who?: string; run(): Promise<LoaderSample> }[] = [
  tandemRuns('Deno', 'wired'),
  tandemRuns('Deno', 'loader'),
  ...(nodeChild ? [tandemRuns('Node', 'wired'), tandemRuns('Node', 'loader')] : []),
  ...(baselineDir ? [tandemRuns('Deno', 'wired', baselineDir), tandemRuns('Deno', 'loader', baselineDir)] : []),
  {
    name: `PyTorch DataLoader (${workers} workers)`,
    async run() {
      const proc = await runWatched(PYTHON, ['bench/loader/torch_loader.py', ...childArgs, '--workers', String(workers)], { cwd: root });
      return { proc, report: parseLast<LoaderReport>(proc, 'torch_loader.py') };
    },
  },
  // draft() decodes at a scale chosen for a centre crop; a random crop needs the whole image.
  ...(rrc
    ? []
    : [
        {
          name: `PyTorch DataLoader with PIL draft() (${workers} workers)`,
          async run() {
            const args = ['bench/loader/torch_loader.py', ...childArgs, '--workers', String(workers), '--draft'];
            const proc = await runWatched(PYTHON, args, { cwd: root });
            return { proc, report: parseLast<LoaderReport>(proc, 'torch_loader.py --draft') };
          },
        },
      ]),
];
const TORCH = rrc ? loaders.length - 1 : loaders.length - 2;
const TORCH_DRAFT = rrc ? -1 : loaders.length - 1;

async function tjbenchPass(): Promise<RefSample> {
  const fps: number[] = [];
  let foreign = 0,
    wall = 0;
  const per = refSeconds / refImages.length;
  for (const r of refImages) {
    const w = await runWatched(
      'tjbench',
      [r.path, '-rgb', '-benchtime', String(per), '-warmup', String(Math.min(0.25, per / 4)), '-nowrite'],
      { cwd: root },
    );
    const m = /Decompress\s+-->\s+Frame rate:\s+([\d.]+)/.exec(w.stdout);
    if (w.code !== 0 || !m) throw new Error(`tjbench ${r.path} (exit ${w.code}): no frame rate in its output:\n${w.stdout}${w.stderr}`);
    fps.push(Number(m[1]));
    foreign += w.foreignCores * w.wallSeconds;
    wall += w.wallSeconds;
  }
  return { fps, foreign: foreign / wall };
}
async function wasmRefPass(): Promise<RefSample> {
  const list = refImages.map((r) => `${r.path}:${r.width}x${r.height}`).join(',');
  const proc = await runWatched(
    process.execPath,
    ['run', '-A', 'bench/loader/tandem-child.ts', '--ref', list, '--seconds', String(refSeconds)],
    { cwd: root },
  );
  const r = parseLast<{ perFile: { decodesPerSecond: number }[] }>(proc, 'tandem-child --ref');
  return { fps: r.perFile.map((p) => p.decodesPerSecond), foreign: proc.foreignCores };
}
/** Images/s over the set, each image once: n ÷ Σ 1/fps. */
const setRate = (fps: number[]) => fps.length / fps.reduce((s, f) => s + 1 / f, 0);
const refOn = refImages.length > 0 && sh('bash', ['-c', 'command -v tjbench']) !== '';
if (!refOn) log('native reference skipped: no tjbench (apt-get install libjpeg-turbo-progs) or no typical images');

// ---- runs -------------------------------------------------------------------------------------
/** Waits until other work keeps at most --quiet-cores cores busy (2 s samples), up to --wait-quiet s. */
async function waitQuiet(label: string): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const busy = await busyCores(2000);
    if (busy <= quietCores) return busy;
    if ((performance.now() - t0) / 1000 >= quietWait) {
      log(`warning: other work keeps ${busy.toFixed(2)} cores busy; going on with ${label} anyway`);
      return busy;
    }
    log(`waiting for a quiet machine before ${label}: other work keeps ${busy.toFixed(2)} cores busy`);
    await new Promise((resolve) => setTimeout(resolve, 8000));
  }
}
const t00 = performance.now();
await waitQuiet('the warm-up');
log("warm-up: each loader once, untimed (page cache, Deno's compile cache)");
for (const l of loaders) {
  const s = await l.run();
  log(`  ${l.name}: ${s.report.images} images, ${s.report.failures} failed, ${(s.report.images / s.report.seconds).toFixed(0)} img/s`);
}
const loaderSamples: LoaderSample[][] = loaders.map(() => []);
const tjSamples: RefSample[] = [];
const wasmSamples: RefSample[] = [];
/** One step of a repetition: a run, its log line, how disturbed it was, and how to keep it. */
type Attempt = { foreign: number; line: string; keep(): void };
type Step = { name: string; go(): Promise<Attempt> };
const steps: Step[] = [
  ...loaders.map(
    (l, i): Step => ({
      name: l.name,
      async go() {
        const s = await l.run();
        const r = s.report;
        return {
          foreign: s.proc.foreignCores,
          keep: () => loaderSamples[i]!.push(s),
          line:
            `${l.name}: ${(r.images / r.seconds).toFixed(0)} img/s, ${((r.cpuSeconds / r.images) * 1000).toFixed(2)} CPU ms/img, ` +
            `peak RSS ${(s.proc.tree.peakRssKb / 1024).toFixed(0)} MiB, first batch ${(r.firstBatchSeconds * 1000).toFixed(0)} ms, ${r.images} delivered, ${r.failures} failed; ` +
            `other work ${s.proc.foreignCores.toFixed(2)} cores`,
        };
      },
    }),
  ),
  ...(refOn
    ? [
        {
          name: 'tjbench',
          async go(): Promise<Attempt> {
            const s = await tjbenchPass();
            return {
              foreign: s.foreign,
              keep: () => tjSamples.push(s),
              line: `tjbench (native, 1 core): ${setRate(s.fps).toFixed(0)} img/s; other work ${s.foreign.toFixed(2)} cores`,
            };
          },
        },
        {
          name: 'wasm 1 thread',
          async go(): Promise<Attempt> {
            const s = await wasmRefPass();
            return {
              foreign: s.foreign,
              keep: () => wasmSamples.push(s),
              line: `Tandem wasm full-size decode, 1 thread: ${setRate(s.fps).toFixed(0)} img/s; other work ${s.foreign.toFixed(2)} cores`,
            };
          },
        },
      ]
    : []),
];
const discarded = new Map<string, number>();
const keptDisturbed = new Map<string, number>();
async function runStep(step: Step): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    let a: Attempt;
    const build = wasmId();
    try {
      a = await step.go();
    } catch (error) {
      // e.g. dist/ being rebuilt by someone else under the Node child: once more, then give up
      if (attempt >= retries) throw error;
      discarded.set(step.name, (discarded.get(step.name) ?? 0) + 1);
      log(`  ${step.name} failed, running it again: ${String(error).split('\n').slice(0, 3).join(' | ')}`);
      await waitQuiet(`${step.name} again`);
      continue;
    }
    if (a.foreign <= maxOther || attempt >= retries) {
      a.keep();
      const after = wasmId();
      for (const b of new Set([build, after])) wasmBuilds.set(b, (wasmBuilds.get(b) ?? 0) + 1);
      if (after !== build) log(`  warning: the wasm module was rebuilt during this run (${build} → ${after})`);
      if (a.foreign > maxOther) keptDisturbed.set(step.name, (keptDisturbed.get(step.name) ?? 0) + 1);
      log(`  ${a.line}${a.foreign > maxOther ? ' (kept: out of retries)' : ''}`);
      return;
    }
    discarded.set(step.name, (discarded.get(step.name) ?? 0) + 1);
    log(`  discarded (other work over ${maxOther} cores): ${a.line}`);
    await waitQuiet(`${step.name} again`);
  }
}
for (let rep = 0; rep < reps; rep++) {
  const order = rep % 2 === 0 ? steps : [...steps].reverse();
  await waitQuiet(`repetition ${rep + 1}`);
  log(`repetition ${rep + 1}/${reps}: ${order.map((s) => s.name).join(' → ')}`);
  for (const s of order) await runStep(s);
}
const benchSeconds = (performance.now() - t00) / 1000;
const uptimeEnd = machineLoad();
log(`uptime: ${uptimeEnd}`);
if (wasmBuilds.size > 1)
  log(
    `warning: the timed runs used ${wasmBuilds.size} wasm builds (${[...wasmBuilds].map(([b, n]) => `${b}: ${n} runs`).join('; ')}); the figures mix them`,
  );

// ---- figures ----------------------------------------------------------------------------------
interface Figures {
  rate: number;
  cpuMs: number;
  rssMiB: number;
  pssMiB: number;
  firstMs: number;
  images: number;
  failures: number;
  treeCpuMs: number;
  procWall: number;
  processes: number;
  foreign: number;
}
const perRep = (s: LoaderSample): Figures => ({
  rate: s.report.images / s.report.seconds,
  cpuMs: (s.report.cpuSeconds / s.report.images) * 1000,
  rssMiB: s.proc.tree.peakRssKb / 1024,
  pssMiB: s.proc.tree.peakPssKb / 1024,
  firstMs: s.report.firstBatchSeconds * 1000,
  images: s.report.images,
  failures: s.report.failures,
  treeCpuMs: (s.proc.tree.cpuSeconds / s.report.images) * 1000,
  procWall: s.proc.wallSeconds,
  processes: s.proc.tree.maxProcesses,
  foreign: s.proc.foreignCores,
});
const figs = loaderSamples.map((samples) => samples.map(perRep));
const med = (i: number, key: keyof Figures) => median(figs[i]!.map((f) => f[key]));
const pairedRatio = (a: number, b: number, f: (x: Figures, y: Figures) => number) => spread(figs[a]!.map((x, k) => f(x, figs[b]![k]!)));
const refRatios = tjSamples.map((t, k) => setRate(wasmSamples[k]!.fps) / setRate(t.fps));

// ---- versions ---------------------------------------------------------------------------------
const torchReport = loaderSamples[TORCH]![0]!.report;
const pyVersions = torchReport.versions ?? {};
const dpkgVersion = (p: string) => sh('dpkg-query', ['-W', '-f=${Version}', p]) || 'not installed';
const gitHead = sh('git', ['rev-parse', '--short', 'HEAD']);
const dirty = [
  ...new Set(
    sh('git', ['status', '--porcelain', '--', 'src', 'wasm'])
      .split('\n')
      .filter(Boolean)
      .map((l) =>
        l
          .trim()
          .replace(/^\S+\s+/, '')
          .replace(/\/[^/]*$/, '/'),
      ),
  ),
];
const denoVersion = (process.versions as Record<string, string | undefined>).deno ?? 'unknown';

// ---- report -----------------------------------------------------------------------------------
const goal = (value: number, target: number, higher: boolean) => ((higher ? value >= target : value <= target) ? 'met' : 'short');
const rows: string[] = [];
rows.push(
  '| loader | images/s | CPU ms/image | peak RSS MiB (tree) | peak PSS MiB (tree) | first batch ms | delivered | failed | processes | whole-process CPU ms/image | whole-process wall s | other work, cores |',
);
rows.push('|---|---|---|---|---|---|---|---|---|---|---|---|');
loaders.forEach((l, i) => {
  const fails = figs[i]!.map((f) => f.failures);
  rows.push(
    `| ${l.name} | ${fixed(med(i, 'rate'), 0)} | ${fixed(med(i, 'cpuMs'), 2)} | ${fixed(med(i, 'rssMiB'), 0)} | ${fixed(med(i, 'pssMiB'), 0)} | ${fixed(med(i, 'firstMs'), 0)} | ${figs[i]![0]!.images} | ${Math.max(...fails)} | ${Math.max(...figs[i]!.map((f) => f.processes))} | ${fixed(med(i, 'treeCpuMs'), 2)} | ${fixed(med(i, 'procWall'), 1)} | ${fixed(med(i, 'foreign'), 2)} |`,
  );
});

const ratioRows: string[] = ['| ratio | median | range over repetitions | goal | |', '|---|---|---|---|---|'];
const tandemIdx = loaders.map((_, i) => i).filter((i) => i !== TORCH && i !== TORCH_DRAFT);
for (const i of tandemIdx) {
  const who = loaders[i]!.who ?? loaders[i]!.name;
  const r1 = pairedRatio(i, TORCH, (a, b) => a.rate / b.rate);
  const r2 = pairedRatio(i, TORCH, (a, b) => a.cpuMs / b.cpuMs);
  const r3 = pairedRatio(i, TORCH, (a, b) => a.rssMiB / b.rssMiB);
  const r4 = pairedRatio(i, TORCH, (a, b) => a.pssMiB / b.pssMiB);
  const range = (r: { min: number; max: number }) => `${r.min.toFixed(2)}–${r.max.toFixed(2)}`;
  const rateGoal = rrc ? 2.5 : 2;
  ratioRows.push(
    `| ${who} ÷ DataLoader, images/s | ${r1.median.toFixed(2)} | ${range(r1)} | ≥ ${rateGoal} | ${goal(r1.median, rateGoal, true)} |`,
  );
  ratioRows.push(`| ${who} ÷ DataLoader, CPU ms/image | ${r2.median.toFixed(2)} | ${range(r2)} | ≤ 0.5 | ${goal(r2.median, 0.5, false)} |`);
  ratioRows.push(
    `| ${who} ÷ DataLoader, peak RSS of the process tree | ${r3.median.toFixed(2)} | ${range(r3)} | ≤ 0.5 | ${goal(r3.median, 0.5, false)} |`,
  );
  ratioRows.push(`| ${who} ÷ DataLoader, peak PSS of the process tree (for reference) | ${r4.median.toFixed(2)} | ${range(r4)} | | |`);
  if (TORCH_DRAFT >= 0) {
    const r5 = pairedRatio(i, TORCH_DRAFT, (a, b) => a.rate / b.rate);
    ratioRows.push(
      `| ${who} ÷ DataLoader with PIL draft(), images/s | ${r5.median.toFixed(2)} | ${range(r5)} | ≥ 1.6 | ${goal(r5.median, 1.6, true)} |`,
    );
  }
}
// The front door's cost: loader() against the hand-wired pipeline it builds, same runtime, same repetition.
for (const i of tandemIdx.filter((k) => loaders[k]!.name.includes('via loader()'))) {
  const r = pairedRatio(i, i - 1, (a, b) => a.rate / b.rate);
  ratioRows.push(
    `| ${loaders[i]!.who} ÷ the hand-wired pipeline, images/s | ${r.median.toFixed(2)} | ${r.min.toFixed(2)}–${r.max.toFixed(2)} | ≥ 0.97 | ${goal(r.median, 0.97, true)} |`,
  );
}
// This tree against the baseline checkout: the same job, runtime and repetition.
for (const i of tandemIdx.filter((k) => baselineDir && loaders[k]!.name.includes(`at ${baselineHead}`))) {
  const here = loaders.findIndex((l) => l.name === loaders[i]!.name.replace(` at ${baselineHead}`, ''));
  const r = pairedRatio(here, i, (a, b) => a.rate / b.rate);
  ratioRows.push(
    `| ${loaders[here]!.who} ÷ the same at ${baselineHead}, images/s | ${r.median.toFixed(2)} | ${r.min.toFixed(2)}–${r.max.toFixed(2)} | ≥ 0.97 | ${goal(r.median, 0.97, true)} |`,
  );
}
if (refRatios.length) {
  const r = spread(refRatios);
  ratioRows.push(
    `| wasm decode (1 thread) ÷ native tjbench (1 core), full size | ${r.median.toFixed(2)} | ${r.min.toFixed(2)}–${r.max.toFixed(2)} | ≥ 0.6 | ${goal(r.median, 0.6, true)} |`,
  );
}

const refRows: string[] = [];
if (refOn) {
  refRows.push(
    '| image | size | bytes | tjbench (native) decodes/s | Tandem wasm, 1 thread, decodes/s | wasm ÷ native |',
    '|---|---|---|---|---|---|',
  );
  refImages.forEach((r, j) => {
    const tj = median(tjSamples.map((s) => s.fps[j]!));
    const wa = median(wasmSamples.map((s) => s.fps[j]!));
    refRows.push(
      `| ${r.path.slice(corpus.length + 1)} | ${r.width}×${r.height} | ${r.bytes} | ${tj.toFixed(0)} | ${wa.toFixed(0)} | ${(wa / tj).toFixed(2)} |`,
    );
  });
  const tj = median(tjSamples.map((s) => setRate(s.fps)));
  const wa = median(wasmSamples.map((s) => setRate(s.fps)));
  refRows.push(`| **the set, each once** | | | ${tj.toFixed(0)} img/s | ${wa.toFixed(0)} img/s | ${(wa / tj).toFixed(2)} |`);
}

const repRows: string[] = [
  '| repetition | ' +
    loaders.map((l) => `${l.name}: img/s · CPU ms/img · RSS MiB · first ms · other work`).join(' | ') +
    (refOn ? ' | tjbench img/s | wasm 1-thread img/s |' : ' |'),
];
repRows.push('|---|' + loaders.map(() => '---|').join('') + (refOn ? '---|---|' : ''));
for (let k = 0; k < reps; k++) {
  const cells = loaders.map((_, i) => {
    const f = figs[i]![k]!;
    return `${f.rate.toFixed(0)} · ${f.cpuMs.toFixed(2)} · ${f.rssMiB.toFixed(0)} · ${f.firstMs.toFixed(0)} · ${f.foreign.toFixed(2)}`;
  });
  const ref = refOn ? ` | ${setRate(tjSamples[k]!.fps).toFixed(0)} | ${setRate(wasmSamples[k]!.fps).toFixed(0)}` : '';
  repRows.push(`| ${k + 1}${k % 2 ? ' (reversed)' : ''} | ${cells.join(' | ')}${ref} |`);
}

const mix = manifest
  ? [...corpusMix(manifest), '', corpusRecipe(manifest)].join('\n')
  : `${files.length} images in ${classes.length} classes (${(corpusBytes / 2 ** 20).toFixed(1)} MiB); no corpus.json, so no recipe to quote.`;

const md = `# Tandem's loader against PyTorch's DataLoader, real photographs

\`\`\`sh
${command}
\`\`\`

Written by \`bench/loader.ts\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${reps} interleaved repetitions (the order
reversed every other repetition), medians; ${fixed(benchSeconds / 60, 1)} min for the warm-up and the repetitions.

${machineLines(uptimeStart, uptimeEnd, machine).join('\n')}
- Deno ${denoVersion} (V8 ${process.versions.v8})${withNode ? `, Node ${nodeVersion}` : ''}; Python ${pyVersions.python ?? '?'}, torch ${pyVersions.torch ?? '?'} (Debian python3-torch ${dpkgVersion('python3-torch')}), torchvision ${pyVersions.torchvision ?? '?'}, PIL ${pyVersions.pil ?? '?'} (${dpkgVersion('python3-pil')}); libjpeg-turbo ${dpkgVersion('libjpeg-turbo-progs')} (tjbench).
- Tandem at ${gitHead}${dirty.length ? ` with uncommitted changes in ${dirty.join(', ')}` : ''}; wasm module \`tandem-decode.wasm\` ${wasmBuilds.size <= 1 ? `${[...wasmBuilds.keys()][0] ?? wasmId()} in every timed run` : `**rebuilt during the run**: ${[...wasmBuilds].map(([b, n]) => `${b} in ${n} timed runs`).join(', ')}`}.

## Corpus

\`${corpus}\`: ${files.length} images, ${classes.length} classes.
${mix}

## Results

The job, both sides: list the folder, read every file, decode, ${
  rrc
    ? "RandomResizedCrop(224) + RandomHorizontalFlip() (torchvision's defaults: scale 0.08–1, ratio 3/4–4/3, p 0.5; Tandem draws the same distribution in its decoder and decodes the JPEG at the DCT scale the crop needs, only the crop's window)"
    : 'Resize(224) + CenterCrop(224)'
} to
RGB u8, batches of ${batch}, every batch touched (a few bytes summed) and dropped. Medians of ${reps}.

${rows.join('\n')}

${ratioRows.join('\n')}

- **images/s**: delivered images ÷ the child's timed seconds. Timed: from the first pull of the
  pipeline / the first \`iter(loader)\` to the last batch. Not timed: importing the library or
  torch, creating Tandem's decode pool (its ${threads} threads start and the wasm module compiles
  there), building the ImageFolder (it lists the folder) and the DataLoader; Tandem lists the
  folder in its untimed setup too. The DataLoader's ${workers} worker processes are forked on the
  first \`iter()\`, so their start-up **is** timed (as it is in every epoch of a real run without
  \`persistent_workers\`).
- **CPU ms/image**: the timed part's CPU (user + system): Tandem reads \`/proc/self/stat\` (every
  thread of the process, the pool's pthreads included) before and after; Python takes
  \`RUSAGE_SELF\` before and \`RUSAGE_SELF + RUSAGE_CHILDREN\` after the iterator has shut down and
  joined its workers (\`multiprocessing.active_children()\` was ${torchReport.workersAlive === 0 ? 'empty' : `not empty (${torchReport.workersAlive})`} then).
  "Whole-process CPU" is the parent's /proc sampling of the whole tree, start-up included (each
  process at its last 50 ms sample).
- **peak RSS (tree)**: the largest sum of RSS over the child's process tree (the DataLoader's workers
  included), sampled every 50 ms over the child's whole life. Shared pages (torch's libraries in
  forked workers) count once per process, as \`ps\` and most published comparisons count them; PSS
  splits them and is given for reference.
- **first batch**: from the start of the timed part to the first batch in the consumer's hands.
- **failed**: Tandem lists every item it could not decode in \`pipeline.failures()\` (delivered + failed
  = listed in every repetition, or the child says so); a DataLoader has no per-item failure path — a
  bad image ends its epoch — so its count is the images lost after such a stop.
- The PyTorch side leaves torch's defaults alone: the main process runs with
  \`torch.get_num_threads()\` = ${torchReport.torchThreads ?? '?'}, and the DataLoader's worker loop sets 1 intra-op thread in each worker itself.
- Not the same pixels: torchvision's \`Resize(224)\` is PIL's antialiased bilinear over the fully decoded image;
  Tandem decodes JPEGs at the smallest M/8 DCT scale that still covers 224 and then resizes bilinearly (its
  default). Tandem applies EXIF orientation (its default); torchvision's default loader ignores it, so
  ${manifest?.encodings['exif-orientation'] ?? 'the'} images with an Orientation tag come out turned differently — the same work either way.
- **other work, cores**: the machine's busy CPU time during the child's run (\`/proc/stat\`) less the
  child's tree and this parent, per second: someone else's work on a shared machine. Before the warm-up
  and each repetition the bench waited (up to ${quietWait} s) for other work to drop below ${quietCores} cores,
  and a run during which other work kept more than ${maxOther} cores busy was discarded and run again
  (at most ${retries} times). Discarded in this run: ${discarded.size ? [...discarded].map(([k, v]) => `${k} ${v}×`).join(', ') : 'none'}; kept although disturbed (out of retries): ${keptDisturbed.size ? [...keptDisturbed].map(([k, v]) => `${k} ${v}×`).join(', ') : 'none'}.
  The parent's /proc sampler itself takes about 3% of one core (stat files every 50 ms, PSS from
  \`smaps_rollup\` once a second: that costs ~10 ms per torch process).
- Both Tandem children run the working tree's code: Deno its TypeScript sources, Node the \`dist/\` built
  from them (${distRebuilt ? 'rebuilt by this run, as it was older than src/' : 'up to date at the start'}); the same wasm module.
- Children are started directly (the Deno binary \`npx\` resolves to, \`node\`, \`/usr/bin/python3\`) so no
  \`npx\` wrapper is counted. A warm-up pass of each loader (untimed) fills the page cache first.

## Native reference: wasm decode against libjpeg-turbo per core

${
  refOn
    ? `${refImages.length} typical corpus images (baseline 4:2:0 colour, long side 400–560 px, no Exif, spread over the listing), each
decoded at full size to RGB, no resize: \`tjbench FILE -rgb -benchtime ${fixed(refSeconds / refImages.length, 2)} -warmup … -nowrite\`
(Debian's libjpeg-turbo with its x86 SIMD, one core) against Tandem's wasm pool on 1 thread
(\`pool.decodeInto(bytes, ptr, { width: srcW, height: srcH, fit: 'stretch', reducedScale: false })\`,
2 requests in flight, ${fixed(refSeconds / refImages.length, 2)} s per image after a warm-up, Deno). Medians of ${reps}.

${refRows.join('\n')}`
    : 'Skipped: no tjbench (`apt-get install libjpeg-turbo-progs`) or no typical images in the corpus.'
}

## Every repetition

${repRows.join('\n')}
`;
mkdirSync(dirname(outPath), { recursive: true });
writeFileSync(outPath, md);
log(`wrote ${outPath} (${benchSeconds.toFixed(0)} s)`);
console.log([...rows, '', ...ratioRows].join('\n'));
if (smoke && !refOn) {
  // scripts/setup.sh installs tjbench: in a smoke run a missing reference is a failure.
  console.error('[bench:loader] smoke run failed: the native reference (tjbench) did not run');
  process.exit(1);
}
args.done(
  `${loaders.map((l, i) => `${l.name} ${fixed(med(i, 'rate'), 0)} img/s`).join(', ')}; ${refOn ? `wasm ÷ tjbench ${fixed(median(refRatios), 2)}` : 'no native reference'}`,
);
