// Clip decoding throughput, every column side by side in one run, interleaved repetitions, medians.
// The job: each video's one 'uniform' clip of 8 frames 2 apart, cover to 112×112, RGB, normalised
// f32 in a GPU buffer (batches of 8 clips). Columns, in headless Chromium on one WebGPU device:
//   - Tandem videoLoader, backend 'webcodecs' (VideoDecoder → WGSL frame pass into the batch);
//   - Tandem videoLoader, backend 'wasm' (the wasm threads, uploaded and normalised in WGSL);
//   - the <video> element a web user writes (seek, drawImage, getImageData, normalise, writeBuffer);
//   - the user's own WebCodecs loop (VideoDecoder → createImageBitmap → canvas → getImageData);
// and outside the browser, for scale, Debian's ffmpeg CLI (one process per clip, --jobs at once).
// Corpora: the moving-shapes fixtures (H.264 64×64, 16 frames at 8 fps) and generated H.264
// 320×240, 10 s at 30 fps, a keyframe every 2 s (bench/video/corpus.ts, cached).
//
//   npx deno run -A bench/video.ts [--shapes 96] [--large 32] [--reps 5] [--threads 2] [--jobs N]
//                                  [--no-browser] [--out docs/bench/video.md] [--smoke]
//
// --smoke (bench/shared/args.ts): 8 + 4 videos, 1 repetition, the report under test-results/bench-smoke/;
// there a failed column, a wrong clip or a Tandem readback fails the run.
import { rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import process from 'node:process';
import { hardwareConcurrency } from '../src/runtime/index.ts';
import { treeCpuSeconds, treeMemory } from './decode/proc.ts';
import { table } from './decode/report.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { describeMachine, machineLines, machineLoad } from './shared/machine.ts';
import { fixed } from './shared/stats.ts';
import { openVideoBrowser, type VideoBrowser } from './video/browser.ts';
import { type Column, corpusResults, hardwareLines, type Sample } from './video/report.ts';
import { type Corpus, LARGE, largeSource, largeVideos, planClips, shapesVideos } from './video/corpus.ts';
import { cliPass, clipArgs, ffmpegVersion } from './video/ffmpeg-cli.ts';
import { torchvisionPass, torchvisionPlan, torchvisionVideo } from './video/torchvision.ts';
import { CLIP, type PageColumn, type PixelCheck } from './video/types.ts';

const cores = hardwareConcurrency();
const args = benchArgs('video', {
  shapes: { type: 'number', default: 96, smoke: 8, help: 'moving-shapes videos (at most 96)' },
  large: { type: 'number', default: 32, smoke: 4, help: 'generated 320×240 10 s videos' },
  reps: { type: 'number', default: 5, smoke: 1, help: 'at least 3 (except with --smoke)' },
  threads: { type: 'number', default: 2, help: "Tandem's wasm pool threads, and the peers' lanes" },
  jobs: { type: 'number', default: cores, help: 'ffmpeg CLI processes at once (default: the cores)' },
  'no-browser': { type: 'boolean' },
  out: { type: 'string', default: 'docs/bench/video.md', smoke: smokeOut('bench-video.md') },
});
const { smoke, argv } = args;
const reps = smoke ? args.values.reps : Math.max(3, args.values.reps);
const { threads, jobs, out: outPath } = args.values;
const command =
  `npx deno run -A bench/video.ts ${argv.filter((a, i) => a !== '--out' && argv[i - 1] !== '--out' && !a.startsWith('--out=')).join(' ')}`.trim();
const log = (s: string) => console.error(`[bench:video] ${s}`);

log(`command: ${command}`);
const machine = describeMachine();
const loadAtStart = machineLoad();
log(`machine: ${machine.line}`);
log(`load: ${loadAtStart}`);

const corpora: Corpus[] = [];
for (const [id, name, description, videos] of [
  ['shapes', 'moving shapes', 'H.264 64×64, 16 frames at 8 fps (scripts/make-fixtures.sh)', shapesVideos(args.values.shapes)],
  [
    'large',
    'generated 320×240',
    `H.264 ${LARGE.width}×${LARGE.height}, ${LARGE.seconds} s at ${LARGE.fps} fps, a keyframe every ${LARGE.keyframeSeconds} s, x264 veryfast (B-frames)`,
    await largeVideos(args.values.large, log),
  ],
] as const) {
  const plans = await planClips(videos);
  const kb = videos.reduce((s, v) => s + v.bytes.length, 0) / videos.length / 1024;
  corpora.push({ id, name, description: `${videos.length} videos, ${description}, ${kb.toFixed(0)} KB on average`, videos, plans });
  log(
    `corpus ${name}: ${videos.length} videos, ${kb.toFixed(0)} KB on average; first clip at ${plans[0]!.times.map((t) => t.toFixed(3)).join(' ')} s`,
  );
}

// ---- columns ----------------------------------------------------------------------------------
const LABELS: Record<Column, string> = {
  'tandem-webcodecs': "Tandem videoLoader, backend 'webcodecs'",
  'tandem-wasm': `Tandem videoLoader, backend 'wasm' (${threads} threads)`,
  element: `<video> element peer (${threads} elements)`,
  'webcodecs-own': `own WebCodecs loop (${threads} decoders at once)`,
  'ffmpeg-cli': `ffmpeg CLI, outside the browser (${jobs} processes at once)`,
  torchvision: 'torchvision VideoReader, outside the browser (1 process, 1 thread)',
};
const PAGE_COLUMNS: PageColumn[] = ['tandem-webcodecs', 'tandem-wasm', 'element', 'webcodecs-own'];
const notes: string[] = [];
const failures: string[] = [];
/**
 * The most a column's clip may differ from the wasm road's (mean absolute, 0..255): the decoders
 * convert YUV to RGB in their own code and resize with their own filters (measured: see the report).
 */
const PIXEL_TOLERANCE = 16;
const samples = new Map<string, Sample[]>();
const runs: { corpus: Corpus; column: Column; run: () => Promise<Sample> }[] = [];

let browser: VideoBrowser | undefined;
const checks = new Map<string, PixelCheck[]>();
if (!args.values['no-browser']) {
  try {
    browser = await openVideoBrowser(corpora, threads);
    log(`Chromium ${browser.version}, adapter ${browser.adapter}`);
    const b = browser;
    for (const corpus of corpora) {
      const c = await b.check(corpus.id);
      checks.set(corpus.id, c);
      for (const x of c) {
        log(
          `check ${corpus.name} / ${LABELS[x.column]}: ${x.mean.toFixed(2)}/255 from the wasm road (per clip ${x.each.map((d) => d.toFixed(1)).join(' ')}; clips differ from each other by ≥ ${x.otherClip.toFixed(2)})`,
        );
        if (!(x.worstClip <= PIXEL_TOLERANCE))
          failures.push(
            `${corpus.name} / ${LABELS[x.column]}: a clip differs from the wasm road's by ${x.worstClip.toFixed(2)}/255 (over ${PIXEL_TOLERANCE})`,
          );
      }
    }
    for (const corpus of corpora)
      for (const column of PAGE_COLUMNS)
        runs.push({
          corpus,
          column,
          run: async () => {
            const c0 = treeCpuSeconds();
            const s = await b.pass(corpus.id, column);
            return { ...s, cpu: treeCpuSeconds() - c0, readbacksPerBatch: s.readbacks / s.batches };
          },
        });
  } catch (e) {
    const why = `Chromium columns missing: ${(e as Error).message.split('\n')[0]} (needs Debian's chromium at /usr/bin/chromium and \`npm ci\`)`;
    notes.push(why);
    log(why);
    await browser?.close();
    browser = undefined;
  }
}
const ffmpeg = ffmpegVersion();
if (ffmpeg)
  for (const corpus of corpora)
    runs.push({
      corpus,
      column: 'ffmpeg-cli',
      run: async () => ({
        ...(await cliPass(corpus.videos, corpus.plans, jobs)),
        readbacksPerBatch: undefined,
        wrongTimes: 0,
        firstBatchSeconds: Number.NaN,
      }),
    });
else notes.push("ffmpeg CLI column missing: install Debian's `ffmpeg`.");
const torchvision = torchvisionVideo();
const planFiles: string[] = [];
if ('version' in torchvision)
  for (const corpus of corpora) {
    const plan = torchvisionPlan(corpus.id, corpus.videos, corpus.plans);
    planFiles.push(plan);
    runs.push({
      corpus,
      column: 'torchvision',
      run: async () => ({ ...(await torchvisionPass(plan)), readbacksPerBatch: undefined, wrongTimes: 0, firstBatchSeconds: Number.NaN }),
    });
  }
else notes.push(torchvision.missing);

// ---- interleaved repetitions ------------------------------------------------------------------
const describe = (r: (typeof runs)[number]) => `${r.corpus.name} / ${LABELS[r.column]}`;
for (const r of runs.filter((r) => PAGE_COLUMNS.includes(r.column as PageColumn))) await r.run(); // decoders, shaders, JIT: untimed
log(`warm-up done; ${runs.length} columns × ${reps} repetitions`);
const repLoads: number[] = [];
for (let rep = 0; rep < reps; rep++) {
  const order = rep % 2 === 0 ? runs : [...runs].reverse();
  const t0 = performance.now();
  for (const r of order) {
    try {
      const s = await r.run();
      const key = `${r.corpus.id}/${r.column}`;
      samples.set(key, [...(samples.get(key) ?? []), s]);
      if (s.failures || s.wrongTimes)
        failures.push(`${describe(r)}: ${s.failures} failed, ${s.wrongTimes} wrong clips; first: ${s.firstError}`);
      if (r.column.startsWith('tandem') && s.readbacksPerBatch) failures.push(`${describe(r)}: ${s.readbacksPerBatch} readbacks per batch`);
      log(
        `rep ${rep + 1} ${describe(r)}: ${(s.clips / s.seconds).toFixed(1)} clips/s, ${((s.cpu / s.clips) * 1000).toFixed(1)} CPU ms/clip, readbacks/batch ${fixed(s.readbacksPerBatch, 1)}`,
      );
    } catch (e) {
      log(`${describe(r)} failed: ${(e as Error).message}`);
      failures.push(`${describe(r)} failed: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  repLoads.push(loadavg()[0] ?? Number.NaN);
  log(`repetition ${rep + 1}/${reps} in ${((performance.now() - t0) / 1000).toFixed(1)} s (load ${fixed(repLoads[rep])})`);
}
const memory = treeMemory();
const chromiumVersion = browser?.version;
const adapter = browser?.adapter;
const pageErrors = browser?.errors ?? [];
await browser?.close();
for (const f of planFiles) rmSync(f, { force: true });
const loadAtEnd = machineLoad();

// ---- report -----------------------------------------------------------------------------------
const COLUMNS: Column[] = [...PAGE_COLUMNS, 'ffmpeg-cli', 'torchvision'];
const corpusTable = (corpus: Corpus) => corpusResults(corpus, samples, LABELS, COLUMNS);
const shapesFirst = corpora[0]!.plans[0]!.times;
const largeFirst = corpora[1]?.plans[0]?.times ?? [];
const lines = [
  '# Video clip benchmark',
  '',
  `Command: \`${command}\``,
  '',
  ...machineLines(loadAtStart, loadAtEnd, machine),
  `- 1-minute load after each repetition: ${repLoads.map((l) => fixed(l)).join(', ')}`,
  '',
  'Absolute figures move with whatever else the host runs; the ratios, measured side by side, are what to read.',
  `Runtimes: Deno ${process.versions.deno ?? '?'}, ${chromiumVersion ? `Chromium ${chromiumVersion} (headless, Debian), WebGPU adapter ${adapter}` : 'no Chromium'}; ${ffmpeg ?? 'no ffmpeg CLI'}.`,
  '',
  `Job: one 'uniform' clip per video (${CLIP.frames} frames, stride ${CLIP.stride}, index mode; for one clip 'uniform' starts at the first frame,`,
  `e.g. ${shapesFirst.map((t) => t.toFixed(3)).join(', ')} s and ${largeFirst.map((t) => t.toFixed(3)).join(', ')} s), cover to ${CLIP.size}×${CLIP.size}, RGB,`,
  `normalised (ImageNet mean/std) f32 in a GPU buffer, batches of ${CLIP.batchSize}. Files are in memory (the page's, or the page cache for ffmpeg)`,
  `before the clock starts. Each column runs one pass over the corpus per repetition; ${reps} repetition${reps === 1 ? '' : 's'}, interleaved (the order`,
  'reverses every repetition), after one untimed warm-up pass of each browser column; medians, with the range over repetitions.',
  'clips/s is wall time to the last clip on the GPU (onSubmittedWorkDone); CPU ms / clip is the CPU time of Deno + every Chromium',
  'process (renderer, GPU, utility) for the browser columns, of the exited ffmpeg processes for the CLI column. Readbacks per',
  "batch: every GPU→CPU or canvas read in the pass (test/shared/readbacks.ts's countReadbacks), ÷ batches. First batch: from the",
  "pass's start to the first batch in the loop's hands (Tandem) or the first 8 clips written (peers), loaders already made.",
  '',
  ...corpora.flatMap(corpusTable),
  '## Same pixels?',
  '',
  "Before the timings, each browser column's first batch is read back (untimed) and compared with the wasm road's, clip by",
  `clip: mean absolute difference on the 0..255 scale (a run fails above ${PIXEL_TOLERANCE}). The decoders convert YUV to RGB in their own code and`,
  "resize with their own filters (Tandem's antialiased bilinear, Skia's drawImage and createImageBitmap 'medium'); the last",
  'column says how far apart two different clips of the corpus are, i.e. what a wrong clip would cost.',
  '',
  ...table(
    ['corpus', 'column', 'mean', 'worst clip', 'nearest other clip'],
    corpora.flatMap((c) =>
      (checks.get(c.id) ?? []).map((x) => [c.name, LABELS[x.column], x.mean.toFixed(2), x.worstClip.toFixed(2), x.otherClip.toFixed(2)]),
    ),
  ),
  '',
  '## How each column runs',
  '',
  "- **Tandem videoLoader**: `videoLoader(items, { clip: { frames: 8, stride: 2 }, sampler: 'uniform', clipsPerVideo: 1, size: 112,",
  `  batchSize: 8, backend, to: gpu, pool })\` on one \`DecodePool\` of ${threads} pthreads (cross-origin isolated page); one loader per`,
  '  corpus and backend, each pass one `for await` epoch (the loader, its decoders and shaders made in the warm-up), batches released',
  "  at once. Its timed pass includes the 'sample' stage: the wasm demuxer over the whole file (with every packet copied out for",
  "  WebCodecs) and the sampler. Every delivered clip's frame times are checked against the plan (below).",
  '- **<video> element peer**: per lane one `<video muted>`; per file an object URL of its bytes, `loadeddata`, then per frame',
  '  `currentTime = t + 1 ms`, await `seeked`, `drawImage` of the cover rectangle into a 112×112 OffscreenCanvas',
  '  (`willReadFrequently`), `getImageData`, normalise into a Float32Array; one `writeBuffer` per clip into its batch slot.',
  "- **own WebCodecs loop**: per clip Tandem's demuxer (as a user's mp4box.js would be), a new `VideoDecoder` fed the packets",
  '  from the keyframe before the clip to its last frame, then per wanted frame `createImageBitmap(frame, cover rectangle,',
  "  { resizeWidth: 112, resizeHeight: 112, resizeQuality: 'medium' })` → canvas → `getImageData` → normalise → `writeBuffer`.",
  `- **ffmpeg CLI**: per clip \`ffmpeg ${clipArgs('FILE.mp4', { ...corpora[0]!.plans[0]!, times: [0] }).join(' ')}\``,
  `  (with \`-ss START−1ms\` before \`-i\` for a clip that starts past 0), checked to give ${CLIP.frames}×${CLIP.size}×${CLIP.size}×3 bytes; ${jobs} processes at once; no normalisation, no GPU.`,
  `- **torchvision VideoReader**: Debian's python3-torchvision ${'version' in torchvision ? torchvision.version : ''}, its \`video_reader\` backend (ffmpeg); per clip`,
  '  `VideoReader(path)`, `seek(start)` past 0, every 2nd frame up to 8, `resize(112, antialias=True)` + `center_crop` + normalise',
  "  (float32, CPU), timed inside one Python process per pass (after an untimed warm-up of 2 clips); CPU is that process's.",
  "  PyAV is not installed here (Debian's python3-av is not in scripts/setup.sh), so `torchvision.io.read_video` is not measured.",
  "- The plan: each clip's frame times come from Tandem's demuxer and `sampleClips` once before any pass (untimed) and are",
  '  handed to every peer, so the peers are spared the demuxing and sampling that the Tandem columns do inside their pass.',
  `- The large corpus's sources: ${[0, 1, 2].map((i) => `\`${largeSource(i).filter}\``).join(', ')} (seeds and views vary per file).`,
  '',
  ...hardwareLines(adapter),
  '## Notes',
  '',
  `- At the end Deno + Chromium (${memory.processes} processes) held ${(memory.rssKb / 1024).toFixed(0)} MiB resident; the Deno process peaked at ${(memory.selfPeakKb / 1024).toFixed(0)} MiB.`,
  ...(pageErrors.length ? [`- Page errors: ${pageErrors.slice(0, 5).join('; ')}`] : []),
  ...[...new Set(failures)].slice(0, 10).map((f) => `- Failure: ${f}`),
  ...notes.map((n) => `- ${n}`),
];
const text = `${lines.join('\n')}\n`;
console.log(text);
writeFileSync(outPath, text);
log(`wrote ${outPath}`);
if (smoke) {
  const problems = [...notes, ...failures];
  if (problems.length) {
    console.error(`[bench:video] smoke run failed:\n${problems.map((m) => `  - ${m}`).join('\n')}`);
    process.exit(1);
  }
  args.done(`${samples.size} columns × corpora (${corpora.map((c) => `${c.videos.length} ${c.id}`).join(', ')}), ${reps} repetition(s)`);
}
process.exit(0);
