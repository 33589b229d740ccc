/**
 * Whether Deno's slower, process-to-process varying speed on the decode module can be avoided by
 * the library: fresh processes, one decode thread each, timed pass after pass from the first image,
 * in Deno with V8's default tiering, with a warm-up (each thread decodes generated images before
 * the first real one), and with eager optimisation asked for at run time
 * (node:v8 setFlagsFromString('--no-wasm-dynamic-tiering') before the module loads); Node beside.
 *   npx deno run -A bench/tiering.ts [--corpus DIR] [--processes 5] [--images 500] [--passes 6]
 *     [--out docs/bench/tiering.md] [--smoke]
 * The processes of all modes are interleaved. Per mode: each process's median over its passes
 * after the first, the spread of those over the processes, and the first pass (the tier-up).
 * --smoke (bench/shared/args.ts): 24 generated images, 1 process per mode, 2 passes.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import process from 'node:process';
import { cacheDir } from '../src/runtime/index.ts';
import { benchImages } from './decode/images.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { corpusFolder } from './shared/corpus.ts';
import { machineLines, machineLoad } from './shared/machine.ts';
import { median } from './shared/stats.ts';

const args = benchArgs('tiering', {
  corpus: { type: 'string', help: 'a folder of JPEGs (default: the ImageNet-sized corpus)' },
  processes: { type: 'number', default: 5, smoke: 1 },
  images: { type: 'number', default: 500, smoke: 24 },
  passes: { type: 'number', default: 6, smoke: 2 },
  out: { type: 'string', default: 'docs/bench/tiering.md', smoke: smokeOut('bench-tiering.md') },
});
const { processes, images, passes, out } = args.values;
const root = new URL('../', import.meta.url).pathname;
const log = (s: string) => console.error(`[bench:tiering] ${s}`);

const corpus = args.smoke
  ? (await benchImages(images))[0]!.path.replace(/\/[^/]+$/, '')
  : (args.values.corpus ?? corpusFolder(cacheDir(), 'imagenet'));
const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
if (built.status !== 0) throw new Error('npm run build failed');

const modes = [
  { name: 'Deno, default tiering', cmd: process.execPath, args: ['run', '-A'], mode: 'default' },
  { name: 'Deno, warm-up before the first image', cmd: process.execPath, args: ['run', '-A'], mode: 'warm' },
  { name: 'Deno, eager optimisation set at run time', cmd: process.execPath, args: ['run', '-A'], mode: 'eager' },
  {
    name: 'Deno, --v8-flags=--no-wasm-dynamic-tiering',
    cmd: process.execPath,
    args: ['run', '-A', '--v8-flags=--no-wasm-dynamic-tiering'],
    mode: 'default',
  },
  { name: 'Node, default tiering', cmd: 'node', args: [], mode: 'default' },
];
const runs = new Map<string, { startMs: number; rates: number[] }[]>(modes.map((m) => [m.name, []]));
const loadAtStart = machineLoad();
for (let p = 0; p < processes; p++) {
  for (const m of p % 2 ? [...modes].reverse() : modes) {
    const r = spawnSync(
      m.cmd,
      [...m.args, 'bench/tiering/child.mjs', '--corpus', corpus, '--images', String(images), '--passes', String(passes), '--mode', m.mode],
      { cwd: root, encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`${m.name}: ${r.stderr}`);
    const result = JSON.parse(r.stdout.trim().split('\n').pop()!) as { startMs: number; rates: number[] };
    runs.get(m.name)!.push(result);
    log(`${m.name}: ${result.rates.map((x) => x.toFixed(0)).join(' ')}`);
  }
}
const loadAtEnd = machineLoad();

const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '–');
const lines = [
  "# Deno's tiering of the decode module",
  '',
  '```sh',
  `npx deno run -A bench/tiering.ts ${args.argv.join(' ')}`.trimEnd(),
  '```',
  '',
  `Written by \`bench/tiering.ts\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${processes} fresh processes per row, interleaved; each decodes ${images} images of \`${corpus.split('/').pop()}\` held in memory, ${passes} passes, on one pool thread (Resize(224) + CenterCrop(224), two requests in flight).`,
  '',
  ...machineLines(loadAtStart, loadAtEnd),
  '',
  '| runtime and mode | images/s: median over processes (each: median of passes 2 on) | lowest – highest process | first pass, median | pool start ms, median | every process |',
  '|---|---|---|---|---|---|',
];
for (const m of modes) {
  const rs = runs.get(m.name)!;
  const steady = rs.map((r) => median(r.rates.slice(1)));
  lines.push(
    `| ${m.name} | ${f0(median(steady))} | ${f0(Math.min(...steady))} – ${f0(Math.max(...steady))} | ${f0(median(rs.map((r) => r.rates[0]!)))} | ${f0(median(rs.map((r) => r.startMs)))} | ${steady.map(f0).join(', ')} |`,
  );
}
writeFileSync(out.startsWith('/') ? out : `${root}${out}`, `${lines.join('\n')}\n`);
log(`wrote ${out}`);
args.done(`${modes.length} modes`);
