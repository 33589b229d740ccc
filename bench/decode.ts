// Image decode throughput, every variant side by side in one run, interleaved repetitions, medians:
//   - PIL (Debian python3-pil, libjpeg-turbo), one process, the torchvision transform;
//   - Tandem's C image path built natively against Debian's libav (gcc), 1..N threads;
//   - Tandem's wasm DecodePool in Deno, 1..N pthreads (with and without DCT-domain reduction);
//   - in headless Chromium (a cross-origin isolated page on 127.0.0.1): Tandem's DecodePool,
//     the browser's own decoder (createImageBitmap with resize in 1..N module workers) and
//     @ffmpeg/ffmpeg (exec per file; single- and multi-thread core, 1..N instances).
// Job: generated 500×375 JPEGs (quality 75..95) → RGB 224×224, Resize(224) + CenterCrop(224),
// bilinear ("resize"); and the same files decoded at full size to RGB ("decode only").
//
//   npx deno run -A bench/decode.ts [--images 256] [--reps 5] [--threads N] [--ffmpeg-images M] [--corpus DIR]
//                                   [--ffmpeg-timeout-ms 10000] [--no-browser] [--out docs/bench/decode.md]
//                                   [--smoke]
//
// Writes docs/bench/decode.md. Missing pieces (python3-pil, libav headers, Chromium) drop their
// columns and say how to get them. --smoke (bench/shared/args.ts): 8 images, 1 repetition, 1 and 2
// threads, 2 images for @ffmpeg/ffmpeg, the report under test-results/bench-smoke/; there a missing
// column or a failed pass fails the run (scripts/setup.sh installs every piece).
import { loadavg } from 'node:os';
import { writeFileSync } from 'node:fs';
import process from 'node:process';
import { DecodePool } from '../src/decode/index.ts';
import { hardwareConcurrency } from '../src/runtime/index.ts';
import { openBrowserBench, type BrowserBench } from './decode/browser.ts';
import { benchImages, corpusImages } from './decode/images.ts';
import { buildNative, nativePass, NATIVE_PACKAGES } from './decode/native.ts';
import { FFMPEG_ARGS } from './decode/page/ffmpeg-args.ts';
import { pilAvailable, pilPass } from './decode/pil.ts';
import { selfCpuSeconds, treeCpuSeconds, treeMemory } from './decode/proc.ts';
import { figures, goalRows, table, type Figures, type Goal, type Row } from './decode/report.ts';
import { decodePass } from './decode/tandem.ts';
import type { FfmpegConfig, PageSample, Sample, Transform } from './decode/types.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { corpusMix, corpusRecipe, readCorpusManifest } from './shared/corpus.ts';
import { describeMachine, machineLines, machineLoad } from './shared/machine.ts';
import { fixed as fmt } from './shared/stats.ts';

// ---- arguments --------------------------------------------------------------------------------
const cores = hardwareConcurrency();
const args = benchArgs('decode', {
  images: { type: 'number', default: 256, smoke: 8 },
  reps: { type: 'number', default: 5, smoke: 1, help: 'at least 3 (except with --smoke)' },
  threads: { type: 'number', default: cores, smoke: 2, help: 'the most threads (default: the cores)' },
  'ffmpeg-images': { type: 'number', smoke: 2, help: 'images per @ffmpeg/ffmpeg pass (default: --images)' },
  'ffmpeg-timeout-ms': { type: 'number', default: 10_000 },
  'no-browser': { type: 'boolean' },
  corpus: { type: 'string', help: 'the first --images JPEGs of this folder (ImageNet-style or flat) instead of generated ones' },
  out: { type: 'string', default: 'docs/bench/decode.md', smoke: smokeOut('bench-decode.md') },
});
const { smoke, argv } = args;
const count = args.values.images;
const reps = smoke ? args.values.reps : Math.max(3, args.values.reps);
const maxThreads = args.values.threads;
const ffmpegCount = Math.min(count, args.values['ffmpeg-images'] ?? count);
const ffmpegTimeoutMs = args.values['ffmpeg-timeout-ms'];
const outPath = args.values.out;
const command =
  `npx deno run -A bench/decode.ts ${argv.filter((a, i) => a !== '--out' && argv[i - 1] !== '--out' && !a.startsWith('--out=')).join(' ')}`.trim();
const threadCounts = [...new Set([1, 2, maxThreads])].filter((t) => t <= maxThreads).sort((a, b) => a - b);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const log = (s: string) => console.error(`[bench:decode] ${s}`);

log(`command: ${command}`);
const machine = describeMachine();
const loadAtStart = machineLoad();
log(`machine: ${machine.line}`);
const corpus = args.values.corpus;
const manifest = corpus ? readCorpusManifest(corpus) : undefined;
const images = corpus ? corpusImages(corpus, count) : await benchImages(count);
const paths = images.map((m) => m.path);
const notes: string[] = [];

// ---- variants ---------------------------------------------------------------------------------
interface Variant {
  row: Row;
  transform: Transform;
  run(): Promise<Sample>;
  /** Runs once before the timed repetitions (JIT tier-up, caches); not for separate processes. */
  warm: boolean;
}
const rows = new Map<string, Row>();
const variants: Variant[] = [];
function add(group: string, label: string, threads: number, transform: Transform, run: () => Promise<Sample>, warm = true): void {
  const row = rows.get(label) ?? { label, group, threads, samples: {} };
  rows.set(label, row);
  variants.push({ row, transform, run, warm });
}
/** A pass timed in-process: wall from the pass, CPU of this process (or its tree) around it. */
const timed = (cpuOf: () => number, pass: () => Promise<PageSample>) => async (): Promise<Sample> => {
  const c0 = cpuOf();
  const s = await pass();
  return { ...s, cpu: cpuOf() - c0 };
};

const pilVersion = await pilAvailable();
if (pilVersion) {
  for (const tr of ['resize', 'decode'] as const) add('PIL', 'PIL, 1 process', 1, tr, () => pilPass(paths, tr), false);
} else notes.push("PIL rows missing: install Debian's `python3-pil` (run with /usr/bin/python3).");

const native = await buildNative();
if ('binary' in native) {
  for (const t of threadCounts) {
    const label = `native libav, ${plural(t, 'thread')}`;
    for (const tr of ['resize', 'decode'] as const)
      add('native', label, t, tr, () => nativePass(native.binary, paths, t, tr, false), false);
    add('native', `${label}, DCT reduction allowed`, t, 'resize', () => nativePass(native.binary, paths, t, 'resize', true), false);
  }
} else {
  notes.push(native.skipped);
  log(native.skipped);
}

const pools = new Map<number, DecodePool>();
for (const t of threadCounts) pools.set(t, await DecodePool.create({ threads: t }));
for (const t of threadCounts) {
  const pool = pools.get(t)!;
  const label = `wasm in Deno, ${plural(t, 'thread')}`;
  for (const tr of ['resize', 'decode'] as const)
    add(
      'wasm (Deno)',
      label,
      t,
      tr,
      timed(selfCpuSeconds, () => decodePass(pool, images, tr, false)),
    );
  add(
    'wasm (Deno)',
    `${label}, DCT reduction allowed`,
    t,
    'resize',
    timed(selfCpuSeconds, () => decodePass(pool, images, 'resize', true)),
  );
}

// The fallback a page without cross-origin isolation gets (a static host without header control):
// one single-threaded instance per worker and one copy per item, forced here beside pthreads.
const workerPools = new Map<number, DecodePool>();
for (const t of threadCounts) workerPools.set(t, await DecodePool.create({ threads: t, mode: 'workers' }));
for (const t of threadCounts)
  add(
    'wasm (Deno)',
    `wasm in Deno, workers mode, ${plural(t, 'thread')}`,
    t,
    'resize',
    timed(selfCpuSeconds, () => decodePass(workerPools.get(t)!, images, 'resize', true)),
  );

let browser: BrowserBench | undefined;
const ffmpegConfigs: FfmpegConfig[] = [];
if (!args.values['no-browser']) {
  try {
    browser = await openBrowserBench(images, maxThreads);
    const b = browser;
    for (const t of threadCounts) {
      for (const tr of ['resize', 'decode'] as const) {
        add(
          'Tandem (Chromium)',
          `Tandem in Chromium, ${plural(t, 'thread')}`,
          t,
          tr,
          timed(treeCpuSeconds, () => b.tandem(t, tr, false)),
        );
        add(
          'createImageBitmap (Chromium)',
          `createImageBitmap in Chromium, ${plural(t, 'worker')}`,
          t,
          tr,
          timed(treeCpuSeconds, () => b.bitmap(t, tr)),
        );
      }
    }
    for (const core of ['st', 'mt'] as const) for (const n of threadCounts) ffmpegConfigs.push({ core, instances: n });
    for (const c of ffmpegConfigs) {
      const { loadSeconds } = await b.ffmpegLoad(c);
      log(`@ffmpeg/ffmpeg ${c.core} core × ${c.instances}: loaded in ${loadSeconds.toFixed(2)} s`);
      const label = `@ffmpeg/ffmpeg in Chromium, ${c.core === 'mt' ? 'core-mt' : 'core'} × ${plural(c.instances, 'instance')}`;
      add(
        '@ffmpeg/ffmpeg (Chromium)',
        label,
        c.instances,
        'resize',
        timed(treeCpuSeconds, () => b.ffmpeg(c, ffmpegTimeoutMs, ffmpegCount)),
        false,
      );
    }
  } catch (e) {
    const why = `Chromium rows missing: ${(e as Error).message.split('\n')[0]} (needs Debian's chromium at /usr/bin/chromium and \`npm ci\`)`;
    notes.push(why);
    log(why);
    await browser?.close();
    browser = undefined;
  }
}

// ---- interleaved repetitions ------------------------------------------------------------------
const smokeFailures: string[] = [];
const describe = (v: Variant) => `${v.row.label} [${v.transform}]`;
for (const v of variants.filter((v) => v.warm)) await v.run();
log(`warm-up done; ${variants.length} variants × ${reps} repetitions`);
for (let r = 0; r < reps; r++) {
  // Alternate the order, so warm-up, drift and neighbours' load fall on every variant alike.
  const order = r % 2 === 0 ? variants : [...variants].reverse();
  const t0 = performance.now();
  for (const v of order) {
    try {
      const s = await v.run();
      (v.row.samples[v.transform] ??= []).push(s);
    } catch (e) {
      log(`${describe(v)} failed: ${(e as Error).message}`);
      if (smoke) smokeFailures.push(`${describe(v)} failed: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  log(`repetition ${r + 1}/${reps} in ${((performance.now() - t0) / 1000).toFixed(1)} s (load ${loadavg()[0]!.toFixed(2)})`);
}
const memory = treeMemory();
const chromium = browser?.version;
const pageErrors = browser?.errors ?? [];
await browser?.close();
for (const p of [...pools.values(), ...workerPools.values()]) await p.close();
const loadAtEnd = machineLoad();

// ---- figures ----------------------------------------------------------------------------------
const imagesOf = (row: Row) => (row.group.startsWith('@ffmpeg') ? ffmpegCount : count);
const fig = (label: string, tr: Transform = 'resize'): Figures | undefined => {
  const row = rows.get(label);
  return row && figures(row.samples[tr], imagesOf(row));
};
const ratio = (a: Figures | undefined, b: Figures | undefined) => (a && b ? a.rate / b.rate : undefined);
const pil = fig('PIL, 1 process');
const nativeLabel = (t: number) => `native libav, ${plural(t, 'thread')}`;

const resultRows = [...rows.values()].map((row) => {
  const res = figures(row.samples.resize, imagesOf(row));
  const dec = figures(row.samples.decode, imagesOf(row));
  const nat = row.group === 'PIL' || row.group === 'native' ? undefined : fig(nativeLabel(row.threads));
  const failures = Math.max(res?.failed ?? 0, dec?.failed ?? 0);
  const hangs = res?.hangs ?? 0;
  return [
    row.label,
    String(row.threads),
    fmt(res?.rate, 0),
    fmt(res?.cpuMs),
    fmt(dec?.rate, 0),
    fmt(dec?.cpuMs),
    fmt(ratio(res, pil)),
    fmt(ratio(res, nat)),
    res?.maxRssKb ? (res.maxRssKb / 1024).toFixed(0) : '',
    failures || hangs ? `up to ${failures} per pass${hangs ? ` (${hangs} hung)` : ''}` : '0',
  ];
});

const bestFfmpeg = ffmpegConfigs
  .map((c) => ({ c, f: fig(`@ffmpeg/ffmpeg in Chromium, ${c.core === 'mt' ? 'core-mt' : 'core'} × ${plural(c.instances, 'instance')}`) }))
  .filter((x): x is { c: FfmpegConfig; f: Figures } => !!x.f)
  .sort((a, b) => b.f.rate - a.f.rate)[0];
const N = maxThreads;
const goals: Goal[] = [
  { what: 'wasm 1 thread (Deno) ÷ PIL 1 process', ratio: ratio(fig('wasm in Deno, 1 thread'), pil), target: 1 },
  ...threadCounts.map((t) => ({
    what: `wasm ${plural(t, 'thread')} (Deno) ÷ native libav ${plural(t, 'thread')}`,
    ratio: ratio(fig(`wasm in Deno, ${plural(t, 'thread')}`), fig(nativeLabel(t))),
    target: 0.8,
  })),
  ...threadCounts.map((t) => ({
    what: `wasm ${plural(t, 'thread')} (Deno) ÷ native, decode only`,
    ratio: ratio(fig(`wasm in Deno, ${plural(t, 'thread')}`, 'decode'), fig(nativeLabel(t), 'decode')),
    target: 0.6,
  })),
  ...(N > 1
    ? [
        {
          what: `wasm in Deno: ${N} threads ÷ (${N} × 1 thread)`,
          ratio: ratio(fig(`wasm in Deno, ${N} threads`), fig('wasm in Deno, 1 thread')),
          target: 0.9 * N,
        },
        {
          what: `(reference, not a goal) native libav: ${N} threads ÷ (${N} × 1 thread)`,
          ratio: ratio(fig(nativeLabel(N)), fig(nativeLabel(1))),
          target: 0.9 * N,
        },
        {
          what: `Tandem in Chromium: ${N} threads ÷ (${N} × 1 thread)`,
          ratio: ratio(fig(`Tandem in Chromium, ${N} threads`), fig('Tandem in Chromium, 1 thread')),
          target: 0.9 * N,
        },
      ].map((g) => ({ ...g, ratio: g.ratio === undefined ? undefined : g.ratio / N, target: 0.9 }))
    : []),
  {
    what: `Tandem in Chromium, ${plural(N, 'thread')} ÷ @ffmpeg/ffmpeg's best (${bestFfmpeg ? `${bestFfmpeg.c.core === 'mt' ? 'core-mt' : 'core'} × ${bestFfmpeg.c.instances}` : 'n/a'})`,
    ratio: ratio(fig(`Tandem in Chromium, ${plural(N, 'thread')}`), bestFfmpeg?.f),
    target: 6,
  },
  ...threadCounts.map((t) => ({
    what: `(reference, not a goal) wasm in Deno, ${plural(t, 'thread')}: workers mode ÷ pthreads, DCT reduction allowed`,
    ratio: ratio(
      fig(`wasm in Deno, workers mode, ${plural(t, 'thread')}`),
      fig(`wasm in Deno, ${plural(t, 'thread')}, DCT reduction allowed`),
    ),
    target: 0,
  })),
  ...threadCounts.map((t) => ({
    what: `Tandem in Chromium ÷ createImageBitmap, ${t} core${t > 1 ? 's' : ''}`,
    ratio: ratio(fig(`Tandem in Chromium, ${plural(t, 'thread')}`), fig(`createImageBitmap in Chromium, ${plural(t, 'worker')}`)),
    target: 2,
  })),
  ...threadCounts.map((t) => ({
    what: `Tandem in Chromium ÷ createImageBitmap, ${t} core${t > 1 ? 's' : ''}, decode only`,
    ratio: ratio(
      fig(`Tandem in Chromium, ${plural(t, 'thread')}`, 'decode'),
      fig(`createImageBitmap in Chromium, ${plural(t, 'worker')}`, 'decode'),
    ),
    target: 2,
  })),
];

// ---- report -----------------------------------------------------------------------------------
const hangsSeen = [...rows.values()].some((r) => (r.samples.resize ?? []).some((s) => s.failed > 0));
const lines = [
  '# Decode benchmark',
  '',
  `Command: \`${command}\``,
  '',
  ...machineLines(loadAtStart, loadAtEnd, machine),
  '',
  'Absolute figures move with whatever else the host runs; the ratios, measured side by side, are what to read.',
  `Runtimes: Deno ${process.versions.deno ?? '?'} (V8 ${process.versions.v8}), ${chromium ? `Chromium ${chromium} (headless, Debian)` : 'no Chromium'},`,
  `${'binary' in native ? `native: Tandem's C (wasm/src) built with gcc -O2 against ${native.libav} and Debian's libjpeg-turbo 2.1.5 (with their x86 SIMD)` : 'no native build'}, ${pilVersion ? `PIL ${pilVersion} (Debian python3-pil)` : 'no PIL'}, @ffmpeg/ffmpeg 0.12.15 with @ffmpeg/core(-mt) 0.12.10.`,
  '',
  `Job: ${corpus ? `the first ${images.length} JPEGs of \`${corpus}\` (${(images.reduce((s, m) => s + m.bytes.length, 0) / images.length / 1024).toFixed(0)} KB and ${(images.reduce((s, m) => s + m.info.width * m.info.height, 0) / images.length / 1000).toFixed(0)} kpx on average)` : `${count} generated 500×375 JPEGs (4:2:0, quality 75..95, cycling)`} read into memory first. **resize**: RGB`,
  '224×224, shorter side to 224 then centre crop (torchvision Resize(224) + CenterCrop(224)), bilinear. **decode only**: the',
  'same files at full size to RGB (RGBA for createImageBitmap), no resize. Each variant runs one pass over all images per',
  `repetition; ${reps} repetitions, interleaved (the order reverses every repetition), after one untimed warm-up pass of the`,
  'in-process variants; medians. images/s is wall time; CPU ms/image is the CPU time of the process doing the work (all',
  'threads): the Python process, the native process, the Deno process, or Deno + Chromium (every Chromium process) for',
  'the Chromium rows.',
  '',
  ...(manifest
    ? [
        `The corpus \`${corpus}\` as a whole (this run decodes its first ${images.length} images in name order):`,
        ...corpusMix(manifest),
        '',
        corpusRecipe(manifest),
        '',
      ]
    : []),
  ...table(
    [
      'decoder',
      'threads',
      'resize: images/s',
      'CPU ms / image',
      'decode only: images/s',
      'CPU ms / image',
      '× PIL (resize)',
      '× native, same threads (resize)',
      'peak RSS MiB',
      'failures',
    ],
    resultRows,
  ),
  '',
  '## Goals (issue 4 item 8; issue 13: Chromium ≥ 2× createImageBitmap and ≥ 6× @ffmpeg/ffmpeg, decode only ≥ 0.6× native)',
  '',
  ...table(['ratio (resize unless said)', 'measured', 'goal', ''], goalRows(goals)),
  '',
  '## How each variant runs',
  '',
  "- **PIL**: `/usr/bin/python3` with Debian's python3-pil: `Image.open(p).convert('RGB')`, `resize` (BILINEAR) to the",
  '  shorter side 224, `crop` the centre, `tobytes()`; one process per pass, timed inside Python.',
  `- **native libav**: \`bench/native/decode-native.c\` + \`wasm/src/image.c\` + \`probe.c\` built with gcc into the cache,`,
  '  the same requests as DecodePool.decodeInto: N pthreads, each with one reused `td_worker`, taking the next file from',
  '  a shared counter; one process per pass, files read before the clock starts.',
  '- **wasm in Deno** / **Tandem in Chromium**: `DecodePool.create({ threads })` (pthreads sharing one memory);',
  '  `decodeInto` with two requests in flight per thread, each into its own slot. In Chromium the pool is created on',
  "  the page's main thread of a cross-origin isolated page (COOP/COEP) served by Vite on 127.0.0.1.",
  '- **createImageBitmap**: N module workers, each holding every file as a Blob, taking the next index from a',
  "  SharedArrayBuffer counter: `createImageBitmap(blob, { resizeWidth, resizeHeight, resizeQuality: 'medium' })` to",
  '  the Resize(224) size, drawn at the crop offset into a 224×224 OffscreenCanvas (`willReadFrequently`), then',
  '  `getImageData` (RGBA bytes). Decode only: `createImageBitmap(blob)` drawn at full size and read back.',
  `- **@ffmpeg/ffmpeg**: per file \`writeFile('in.jpg')\`, \`exec\` of \`ffmpeg ${FFMPEG_ARGS.join(' ')}\`, \`readFile('out.rgb')\``,
  `  (checked to be 224×224×3 bytes), delete both; single-thread \`@ffmpeg/core\` or \`@ffmpeg/core-mt\`, 1..${N} instances`,
  `  each taking the next file; core files served locally from node_modules; ${ffmpegCount} of the images per pass; a file`,
  `  that takes over ${ffmpegTimeoutMs / 1000} s counts as hung and its instance is replaced. Loading the instances is not timed.`,
  '',
  '## Memory and notes',
  '',
  `- Peak RSS is given for variants that run in a process of their own. The Deno process (every wasm pool of the run)`,
  `  peaked at ${(memory.selfPeakKb / 1024).toFixed(0)} MiB; at the end Deno + Chromium (${memory.processes} processes) held ${(memory.rssKb / 1024).toFixed(0)} MiB resident.`,
  '- Time to first batch does not apply here (no batching); `node dist/cli/main.js bench` reports it for the loader.',
  ...[...rows.values()]
    .filter((r) => r.group.startsWith('@ffmpeg'))
    .flatMap((r) => {
      const ss = r.samples.resize ?? [];
      const failed = ss.reduce((n, s) => n + s.failed, 0),
        hung = ss.reduce((n, s) => n + (s.hangs ?? 0), 0);
      const first = ss.find((s) => s.firstError)?.firstError;
      return failed
        ? [
            `- ${r.label}: ${failed} of ${ss.length * ffmpegCount} execs failed (${hung} hung), each followed by terminating and reloading that instance inside the timed pass; first: ${first}.`,
          ]
        : [];
    }),
  ...(hangsSeen
    ? [
        '- images/s counts only files that produced 224×224×3 bytes; a failing @ffmpeg/ffmpeg instance is replaced (terminate + load), which a user would have to do too.',
      ]
    : []),
  ...(pageErrors.length ? [`- Page errors: ${pageErrors.slice(0, 5).join('; ')}`] : []),
  ...notes.map((n) => `- ${n}`),
  ...('binary' in native ? [] : [`- To get the native rows: \`apt-get install ${NATIVE_PACKAGES}\`.`]),
];
const text = lines.join('\n') + '\n';
console.log(text);
writeFileSync(outPath, text);
log(`wrote ${outPath}`);
if (smoke) {
  // scripts/setup.sh installs every piece: in a smoke run a missing column is a failure, not a note.
  const missing = [...notes, ...smokeFailures];
  if (missing.length) {
    console.error(`[bench:decode] smoke run failed:\n${missing.map((m) => `  - ${m}`).join('\n')}`);
    process.exit(1);
  }
  args.done(
    `${rows.size} rows (${[...new Set([...rows.values()].map((r) => r.group))].join(', ')}), ${count} images, ${reps} repetition(s)`,
  );
}
process.exit(0);
