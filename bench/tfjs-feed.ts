// TensorFlow.js fed by its own input path against the same model fed by Tandem, in headless
// Chromium on one WebGPU device, same JPEGs, side by side in one run, interleaved repetitions,
// medians (bench/tfjs-feed/page.ts has both paths):
//   - images/s into a training step (one SGD step of a small conv net per batch), and into
//     tensors alone ("input": each batch only summed on the device);
//   - GPU→CPU readbacks of every kind (test/shared/readbacks.ts: maps, copies into readable buffers or canvases, canvas and framework reads) per batch.
// Corpora: the generated 500×375 shapes (bench/decode's images) and, with --corpus DIR, any
// folder of JPEGs (ImageNet-style or flat), e.g. the photo corpus of bench/loader.ts.
//
//   npx deno run -A bench/tfjs-feed.ts [--images 256] [--reps 5] [--size 32] [--batch 32] [--threads N]
//                                      [--corpus DIR] [--out docs/bench/tfjs-feed.md] [--smoke]
// --smoke (bench/shared/args.ts): 8 images in batches of 4, 1 repetition, 2 threads, the report
// under test-results/bench-smoke/.
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { createServer } from 'vite';
import { hardwareConcurrency } from '../src/runtime/index.ts';
import { chromiumArgs, isolation } from '../vite.config.ts';
import { benchAssets } from './decode/browser.ts';
import { benchImages, corpusImages, type BenchImage } from './decode/images.ts';
import { table } from './decode/report.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { describeMachine, machineLines, machineLoad } from './shared/machine.ts';
import { median, times } from './shared/stats.ts';
import type { FeedMode, FeedPath, FeedSample } from './tfjs-feed/page.ts';

const args = benchArgs('tfjs-feed', {
  images: { type: 'number', default: 256, smoke: 8 },
  reps: { type: 'number', default: 5, smoke: 1, help: 'at least 3 (except with --smoke)' },
  size: { type: 'number', default: 32 },
  batch: { type: 'number', default: 32, smoke: 4 },
  threads: { type: 'number', default: hardwareConcurrency(), smoke: 2 },
  corpus: { type: 'string', help: 'a folder of JPEGs, measured after the generated images' },
  out: { type: 'string', default: 'docs/bench/tfjs-feed.md', smoke: smokeOut('bench-tfjs-feed.md') },
});
const { smoke, argv } = args;
const count = args.values.images;
const reps = smoke ? args.values.reps : Math.max(3, args.values.reps);
const { size, batch, threads, corpus: corpusDir, out: outPath } = args.values;
const command = `npx deno run -A bench/tfjs-feed.ts ${argv.join(' ')}`.trim();
const log = (s: string) => console.error(`[bench:tfjs-feed] ${s}`);

const machine = describeMachine();
const uptimeStart = machineLoad();
log(`command: ${command}`);
log(`machine: ${machine.line}`);
log(`uptime: ${uptimeStart}`);
const corpora: { name: string; images: BenchImage[] }[] = [{ name: 'generated 500×375 shapes', images: await benchImages(count) }];
if (corpusDir) corpora.push({ name: corpusDir, images: corpusImages(corpusDir, count, true) });

const paths: FeedPath[] = ['tfjs', 'tandem'];
const modes: FeedMode[] = ['input', 'train'];
const lines: string[] = [];
let chromeVersion = '';
for (const corpus of corpora) {
  const meanKpx = corpus.images.reduce((s, m) => s + m.info.width * m.info.height, 0) / corpus.images.length / 1000;
  const meanKb = corpus.images.reduce((s, m) => s + m.bytes.length, 0) / corpus.images.length / 1024;
  log(`corpus ${corpus.name}: ${corpus.images.length} images, mean ${meanKpx.toFixed(0)} kpx, ${meanKb.toFixed(1)} KB`);
  const server = await createServer({
    configFile: false,
    root: new URL('../', import.meta.url).pathname,
    logLevel: 'error',
    plugins: [benchAssets(corpus.images)],
    server: { host: '127.0.0.1', port: 0, strictPort: false, headers: isolation, hmr: false },
    worker: { format: 'es' },
  });
  await server.listen();
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: chromiumArgs, headless: true });
  chromeVersion = browser.version();
  const samples = new Map<string, FeedSample[]>();
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const port = (server.httpServer!.address() as AddressInfo).port;
    await page.goto(`http://127.0.0.1:${port}/bench/tfjs-feed/index.html`);
    await page.waitForFunction(() => !!window.tandemFeedBench, undefined, { timeout: 180_000 });
    const ready = await page.evaluate(([n, s, b, t]) => window.tandemFeedBench!.load(n, s, b, t), [
      corpus.images.length,
      size,
      batch,
      threads,
    ] as const);
    if (!ready.crossOriginIsolated || ready.backend !== 'webgpu') throw new Error(`bench page: ${JSON.stringify(ready)}`);
    // A warm-up pass of each (shader compilation, pool start), then interleaved repetitions.
    for (const mode of modes)
      for (const path of paths) await page.evaluate(([p, m]) => window.tandemFeedBench!.pass(p, m), [path, mode] as const);
    for (let r = 0; r < reps; r++) {
      for (const mode of modes) {
        for (const path of r % 2 ? [...paths].reverse() : paths) {
          const s = await page.evaluate(([p, m]) => window.tandemFeedBench!.pass(p, m), [path, mode] as const);
          log(
            `rep ${r + 1}/${reps} ${mode} ${path}: ${(s.images / s.seconds).toFixed(0)} images/s, ${s.readbacks} readbacks, ${s.batches} batches`,
          );
          const key = `${mode}/${path}`;
          samples.set(key, [...(samples.get(key) ?? []), s]);
        }
      }
    }
    if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  } finally {
    await browser.close();
    await server.close();
  }
  const rate = (key: string) => median(samples.get(key)!.map((s) => s.images / s.seconds));
  const perBatch = (key: string) => median(samples.get(key)!.map((s) => s.readbacks / s.batches));
  lines.push(
    `### ${corpus.name}: ${corpus.images.length} images, mean ${meanKpx.toFixed(0)} kpx, ${meanKb.toFixed(1)} KB`,
    '',
    ...table(
      ['into', 'TensorFlow.js own path, images/s', 'Tandem, images/s', 'Tandem ÷ tf.js', 'readbacks per batch (tf.js, Tandem)'],
      modes.map((mode) => [
        mode === 'train' ? 'a training step' : 'tensors only',
        rate(`${mode}/tfjs`).toFixed(0),
        rate(`${mode}/tandem`).toFixed(0),
        times(rate(`${mode}/tandem`) / rate(`${mode}/tfjs`)),
        `${perBatch(`${mode}/tfjs`).toFixed(2)}, ${perBatch(`${mode}/tandem`).toFixed(2)}`,
      ]),
    ),
    '',
  );
}
const uptimeEnd = machineLoad();
writeFileSync(
  outPath,
  `# TensorFlow.js fed by its own input path and by Tandem (Chromium, one WebGPU device)

\`${command}\`

Same model (conv 8 → pool → conv 16 → pool → dense 4, SGD), same device (TensorFlow.js's WebGPU
backend built on Tandem's device), same JPEGs held in memory, each resized to ${size}×${size}
(stretched) and normalised with ImageNet's mean and std, batches of ${batch}.
- **TensorFlow.js's own path**, as its guide writes one: \`tf.data.generator\` over
  \`createImageBitmap(blob, { resizeWidth, resizeHeight })\` → \`tf.browser.fromPixels\` →
  float, normalise → \`.batch(${batch}).prefetch(2)\`.
- **Tandem**: \`ImageBatcher\` on ${threads} wasm pthreads (decode and resize straight into batch
  buffers) → \`TfjsFeeder\` (upload ring, WGSL normalise, \`tf.tensor({ buffer })\`).

Each pass either runs one training step per batch or only makes each batch a tensor (summed on
the device, not read), and ends when the GPU has finished (\`onSubmittedWorkDone\`, not a
readback). A warm-up pass of each, then ${reps} interleaved repetitions; medians. Readbacks are
counted by test/shared/readbacks.ts during the pass, every kind: \`mapAsync(READ)\`, copies into
\`MAP_READ\` buffers or into a canvas's texture, canvas and WebGL reads, and tf.js's own reads of
GPU tensors.

Chromium ${chromeVersion}, WebGPU on SwiftShader (a CPU adapter): the training step runs on the
same ${hardwareConcurrency()} cores as the decoding, so the absolute numbers say little about a real
GPU; the ratio of the input paths and the readback counts do.

${lines.join('\n')}
${machineLines(uptimeStart, uptimeEnd, machine).join('\n')}
`,
);
log(`wrote ${outPath}`);
args.done(`${corpora.length} corpus(es), ${count} images, ${reps} repetition(s); Chromium ${chromeVersion}`);
