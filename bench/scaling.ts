/**
 * Why two decode threads give less than twice one: the machine's own two-thread scaling for
 * compute-bound code, beside Tandem's decode pool with one and two threads, in Node and Deno, and
 * where the pool's loss goes.
 *   npx deno run -A bench/scaling.ts [--corpus DIR ...] [--images 600] [--reps 5] [--out docs/bench/scaling.md] [--smoke]
 * Each runtime runs bench/scaling/child.mjs (plain JS on dist/) once per corpus, the runtimes
 * interleaved; each child interleaves its own repetitions (1 thread, 2 threads, order reversed
 * every other one). Per configuration it reports images/s; the pool threads' time per image
 * (`stats().threadMs`, wall clock inside the decode); their busy share (that time over threads ×
 * elapsed); and CPU per image, of the process and of each OS thread (Linux /proc, 10 ms ticks).
 * Two-thread scaling = images/s with 2 ÷ (2 × with 1) = (busy share 2 ÷ busy share 1) ×
 * (thread ms per image 1 ÷ 2): the first factor is time the threads waited for work, the second
 * the decode itself slowing down beside a second thread (shared caches, a shared core).
 * --corpus (repeatable; default the three corpora of bench/loader.ts, made if missing).
 * --smoke (bench/shared/args.ts): 24 generated images, 1 repetition, the report under test-results/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { cacheDir } from '../src/runtime/index.ts';
import { benchImages } from './decode/images.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { CORPUS_SHAPES, corpusFolder } from './shared/corpus.ts';
import { machineLines, machineLoad } from './shared/machine.ts';
import { median } from './shared/stats.ts';

const args = benchArgs('scaling', {
  corpus: { type: 'string', help: 'a folder of JPEGs; comma-separated for several' },
  images: { type: 'number', default: 600, smoke: 24 },
  reps: { type: 'number', default: 5, smoke: 1 },
  out: { type: 'string', default: 'docs/bench/scaling.md', smoke: smokeOut('bench-scaling.md') },
});
const { images, reps, out } = args.values;
const root = new URL('../', import.meta.url).pathname;
const log = (s: string) => console.error(`[bench:scaling] ${s}`);

interface Pass {
  imagesPerS: number;
  threadMsPerImage: number;
  busyShare: number;
  processCpuMsPerImage: number;
  mainThreadCpuMsPerImage: number;
  poolThreadCpuMsPerImage: number[];
}
interface ChildResult {
  runtime: string;
  images: number;
  probe: Record<'1' | '2', number[]>;
  pool: Record<'1' | '2', Pass[]>;
}

function corpora(): string[] {
  if (args.values.corpus) return args.values.corpus.split(',');
  if (args.smoke) return [];
  return CORPUS_SHAPES.map((shape) => corpusFolder(cacheDir(), shape));
}
let dirs = corpora();
if (args.smoke) {
  const generated = await benchImages(images);
  dirs = [generated[0]!.path.replace(/\/[^/]+$/, '')];
}
for (const d of dirs) if (!existsSync(d)) throw new Error(`${d} is missing: make it with bench/loader.ts --shape … (or give --corpus)`);

const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
if (built.status !== 0) throw new Error('npm run build failed');

const runtimes = [
  { name: 'node', cmd: 'node', args: ['bench/scaling/child.mjs'] },
  { name: 'deno', cmd: process.execPath, args: ['run', '-A', 'bench/scaling/child.mjs'] },
];
const loadAtStart = machineLoad();
const results: { corpus: string; result: ChildResult }[] = [];
for (const corpus of dirs) {
  for (const rt of runtimes) {
    log(`${rt.name} on ${corpus}`);
    const r = spawnSync(rt.cmd, [...rt.args, '--corpus', corpus, '--images', String(images), '--reps', String(reps)], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    });
    if (r.status !== 0) throw new Error(`${rt.name} child failed: ${r.stderr}`);
    results.push({ corpus, result: JSON.parse(r.stdout.trim().split('\n').pop()!) as ChildResult });
  }
}
const loadAtEnd = machineLoad();

const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const med = (passes: Pass[], pick: (p: Pass) => number) => median(passes.map(pick));
const lines = [
  '# Two-thread scaling of the decode pool',
  '',
  '```sh',
  `npx deno run -A bench/scaling.ts ${args.argv.join(' ')}`.trimEnd(),
  '```',
  '',
  `Written by \`bench/scaling.ts\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${reps} interleaved repetitions per child, medians.`,
  '',
  ...machineLines(loadAtStart, loadAtEnd),
  '',
  'The job: Resize(224) + CenterCrop(224) to RGB, the images held in memory (spread over the corpus),',
  'two requests in flight per thread. "Machine" is a compute-bound JavaScript loop in one and in two',
  'workers: what the cores give any code. Scaling = 2 threads ÷ (2 × 1 thread); it is the product',
  'of the busy factor (busy share with 2 ÷ with 1: time the threads waited for work) and the',
  'decode factor (thread ms per image with 1 ÷ with 2: the decode slowing beside a second thread).',
  '',
  '| corpus | runtime | machine scaling | 1 thread, images/s | 2 threads, images/s | scaling | busy share 1 / 2 | busy factor | thread ms/image 1 / 2 | decode factor | CPU ms/image of the main thread, 1 / 2 | process CPU ms/image 1 / 2 |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|',
];
for (const { corpus, result } of results) {
  const [p1, p2] = [result.pool['1'], result.pool['2']];
  const machine = median(result.probe['2']) / (2 * median(result.probe['1']));
  const r1 = med(p1, (p) => p.imagesPerS);
  const r2 = med(p2, (p) => p.imagesPerS);
  const b1 = med(p1, (p) => p.busyShare);
  const b2 = med(p2, (p) => p.busyShare);
  const t1 = med(p1, (p) => p.threadMsPerImage);
  const t2 = med(p2, (p) => p.threadMsPerImage);
  lines.push(
    `| ${corpus.split('/').pop()} (${result.images}) | ${result.runtime} | ${f(machine)} | ${f(r1, 0)} | ${f(r2, 0)} | ${f(r2 / (2 * r1))} | ${f(b1)} / ${f(b2)} | ${f(b2 / b1)} | ${f(t1, 3)} / ${f(t2, 3)} | ${f(t1 / t2)} | ${f(
      med(p1, (p) => p.mainThreadCpuMsPerImage),
      3,
    )} / ${f(
      med(p2, (p) => p.mainThreadCpuMsPerImage),
      3,
    )} | ${f(
      med(p1, (p) => p.processCpuMsPerImage),
      3,
    )} / ${f(
      med(p2, (p) => p.processCpuMsPerImage),
      3,
    )} |`,
  );
}
writeFileSync(out.startsWith('/') ? out : `${root}${out}`, `${lines.join('\n')}\n`);
log(`wrote ${out}`);
args.done(`${results.length} runs`);
