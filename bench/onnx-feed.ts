// ONNX Runtime Web fed by its own input path against the same model fed by Tandem, in headless
// Chromium on one WebGPU device, same JPEGs, side by side in one run, interleaved repetitions,
// medians (bench/onnx-feed/page.ts has both paths):
//   - images/s into inference (a small seeded conv net, test/shared/onnx-model.ts) on ONNX
//     Runtime's WebGPU execution provider, and on its wasm one (Tandem's CPU tensors there);
//   - GPU→CPU readbacks of every kind (test/shared/readbacks.ts: maps, copies into readable buffers or canvases, canvas and framework reads) per batch;
//   - before the timings, both paths' outputs on the first batch compared (a wrong feed fails the run).
// Corpora: the generated 500×375 shapes (bench/decode's images) and, with --corpus DIR, any
// folder of JPEGs (ImageNet-style or flat), e.g. the photo corpus of bench/loader.ts.
//
//   npx deno run -A bench/onnx-feed.ts [--images 256] [--reps 5] [--size 32] [--batch 32] [--threads N]
//                                      [--corpus DIR] [--out docs/bench/onnx-feed.md] [--smoke]
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
import { fixed, median, times } from './shared/stats.ts';
import type { FeedCheck, FeedPath, FeedSample, Provider } from './onnx-feed/page.ts';

const args = benchArgs('onnx-feed', {
  images: { type: 'number', default: 256, smoke: 8 },
  reps: { type: 'number', default: 5, smoke: 1, help: 'at least 3 (except with --smoke)' },
  size: { type: 'number', default: 32 },
  batch: { type: 'number', default: 32, smoke: 4 },
  threads: { type: 'number', default: hardwareConcurrency(), smoke: 2 },
  corpus: { type: 'string', help: 'a folder of JPEGs, measured after the generated images' },
  out: { type: 'string', default: 'docs/bench/onnx-feed.md', smoke: smokeOut('bench-onnx-feed.md') },
});
const { smoke, argv } = args;
const count = args.values.images;
const reps = smoke ? args.values.reps : Math.max(3, args.values.reps);
const { size, batch, threads, corpus: corpusDir, out: outPath } = args.values;
const command = `npx deno run -A bench/onnx-feed.ts ${argv.join(' ')}`.trim();
const log = (s: string) => console.error(`[bench:onnx-feed] ${s}`);

// The check's tolerances (bench/onnx-feed/page.ts check()). Same pixels: ONNX Runtime's own
// normalisation loop and tensor against Tandem's feed, one session: float rounding only (WGSL
// against JavaScript on WebGPU, measured ≤ 4e-7; the same arithmetic, bit for bit, on wasm). The
// canvas path decodes and resizes by itself (bilinear sampling, where Tandem filters as PIL's
// antialiased bilinear does): on first batches of 32 its pixels measured 4.6–10.3 levels of 255
// apart from Tandem's on average (generated shapes, photographs), its outputs 2–5% of the largest
// output apart.
const SAME_PIXELS_TOLERANCE = 1e-4;
const PIXEL_MEAN_TOLERANCE = 20; // mean absolute difference, 0..255
const CANVAS_OUTPUT_TOLERANCE = 0.15; // max absolute output difference ÷ the largest absolute output

function checkFeeds(provider: Provider, c: FeedCheck): void {
  const what = `${provider}: ${JSON.stringify(c)}`;
  if (!(c.samePixels <= SAME_PIXELS_TOLERANCE))
    throw new Error(`onnx-feed: Tandem's feed and ONNX Runtime's own loop differ on the same pixels by ${c.samePixels}; ${what}`);
  if (c.matched !== c.images)
    throw new Error(
      `onnx-feed: ${c.images - c.matched} canvas image(s) nearer to another image's Tandem pixels than to their own; ${what}`,
    );
  if (!(c.pixelMean <= PIXEL_MEAN_TOLERANCE))
    throw new Error(`onnx-feed: the canvas's pixels and Tandem's differ by ${c.pixelMean} on average; ${what}`);
  if (!(c.canvas <= CANVAS_OUTPUT_TOLERANCE * c.outputMax))
    throw new Error(`onnx-feed: the canvas path's outputs differ from Tandem's by ${c.canvas}; ${what}`);
}

const machine = describeMachine();
const uptimeStart = machineLoad();
log(`command: ${command}`);
log(`machine: ${machine.line}`);
log(`uptime: ${uptimeStart}`);
const corpora: { name: string; images: BenchImage[] }[] = [{ name: 'generated 500×375 shapes', images: await benchImages(count) }];
if (corpusDir) corpora.push({ name: corpusDir, images: corpusImages(corpusDir, count, true) });

const paths: FeedPath[] = ['ort', 'tandem', 'model'];
const providers: Provider[] = ['webgpu', 'wasm'];
const lines: string[] = [];
let chromeVersion = '';
let env = { adapter: '', ort: '', wasmThreads: 0, cores: 0 };
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
  const checks = new Map<Provider, FeedCheck>();
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const port = (server.httpServer!.address() as AddressInfo).port;
    await page.goto(`http://127.0.0.1:${port}/bench/onnx-feed/index.html`);
    await page.waitForFunction(() => !!window.tandemOnnxFeedBench, undefined, { timeout: 180_000 });
    const ready = await page.evaluate(([n, s, b, t]) => window.tandemOnnxFeedBench!.load(n, s, b, t), [
      corpus.images.length,
      size,
      batch,
      threads,
    ] as const);
    if (!ready.crossOriginIsolated) throw new Error(`bench page: ${JSON.stringify(ready)}`);
    env = ready;
    log(`ONNX Runtime Web ${ready.ort}, adapter ${ready.adapter}, ${ready.cores} cores`);
    // Both feeds give the same outputs on the first batch, or the run stops here.
    for (const provider of providers) {
      const c = await page.evaluate((p) => window.tandemOnnxFeedBench!.check(p), provider);
      log(
        `check ${provider}: outputs apart: same pixels ${c.samePixels.toExponential(2)}, canvas ${c.canvas.toExponential(2)} (largest output ${c.outputMax.toFixed(2)}); canvas pixels ${c.pixelMean.toFixed(2)} mean (${c.pixelMax} max) from Tandem's, ≥ ${c.otherImages.toFixed(2)} from other images, ${c.matched}/${c.images} matched`,
      );
      checkFeeds(provider, c);
      checks.set(provider, c);
    }
    // A warm-up pass of each (shader compilation, pool start), then interleaved repetitions.
    for (const provider of providers)
      for (const path of paths) await page.evaluate(([p, e]) => window.tandemOnnxFeedBench!.pass(p, e), [path, provider] as const);
    for (let r = 0; r < reps; r++) {
      for (const provider of providers) {
        for (const path of r % 2 ? [...paths].reverse() : paths) {
          const s = await page.evaluate(([p, e]) => window.tandemOnnxFeedBench!.pass(p, e), [path, provider] as const);
          log(
            `rep ${r + 1}/${reps} ${provider} ${path}: ${(s.images / s.seconds).toFixed(0)} images/s, ${s.readbacks} readbacks, ${s.batches} batches`,
          );
          const key = `${provider}/${path}`;
          samples.set(key, [...(samples.get(key) ?? []), s]);
        }
      }
    }
    if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  } finally {
    await browser.close();
    await server.close();
  }
  const rates = (key: string) => samples.get(key)!.map((s) => s.images / s.seconds);
  const rate = (key: string) => median(rates(key));
  const perBatch = (key: string) => median(samples.get(key)!.map((s) => s.readbacks / s.batches));
  // Each repetition's ratio (the two paths ran next to each other): the range the median sits in.
  const ratioRange = (provider: Provider) => {
    const ort = rates(`${provider}/ort`);
    const ratios = rates(`${provider}/tandem`).map((t, i) => t / ort[i]!);
    return `${fixed(Math.min(...ratios))}–${fixed(Math.max(...ratios))}`;
  };
  lines.push(
    `### ${corpus.name}: ${corpus.images.length} images, mean ${meanKpx.toFixed(0)} kpx, ${meanKb.toFixed(1)} KB`,
    '',
    ...table(
      [
        'execution provider',
        'ONNX Runtime Web own path, images/s',
        'Tandem, images/s',
        'Tandem ÷ ORT (range over repetitions)',
        'readbacks per batch (ORT, Tandem)',
        'the model alone, images/s',
      ],
      providers.map((p) => [
        p === 'webgpu' ? 'WebGPU' : 'wasm',
        rate(`${p}/ort`).toFixed(0),
        rate(`${p}/tandem`).toFixed(0),
        `${times(rate(`${p}/tandem`) / rate(`${p}/ort`))} (${ratioRange(p)})`,
        `${perBatch(`${p}/ort`).toFixed(2)}, ${perBatch(`${p}/tandem`).toFixed(2)}`,
        rate(`${p}/model`).toFixed(0),
      ]),
    ),
    '',
    `The first batch (${checks.get('webgpu')!.images} images) through both paths: outputs (embedding and logits), max absolute difference from Tandem's; pixels, mean absolute difference (0..255):`,
    '',
    ...table(
      [
        'execution provider',
        "ORT's loop and tensor on Tandem's pixels",
        'canvas path (largest output)',
        'canvas pixels: same image (max), nearest other image',
        'canvas images nearest their own',
      ],
      providers.map((p) => {
        const c = checks.get(p)!;
        return [
          p === 'webgpu' ? 'WebGPU' : 'wasm',
          c.samePixels === 0 ? '0 (bit for bit)' : c.samePixels.toExponential(1),
          `${c.canvas.toExponential(1)} (${c.outputMax.toFixed(2)})`,
          `${c.pixelMean.toFixed(1)} (${c.pixelMax}), ${c.otherImages.toFixed(1)}`,
          `${c.matched}/${c.images}`,
        ];
      }),
    ),
    '',
  );
}
const uptimeEnd = machineLoad();
writeFileSync(
  outPath,
  `# ONNX Runtime Web fed by its own input path and by Tandem (Chromium, one WebGPU device)

\`${command}\`

Same model (seeded, test/shared/onnx-model.ts: conv 3×3 3→8 → relu → global average pool →
embedding 8 → gemm → logits 4), same session per execution provider, same JPEGs held in memory,
each resized to ${size}×${size} (stretched) and normalised with ImageNet's mean and std, NCHW
float32, batches of ${batch}.
- **ONNX Runtime Web's own path**, as its image examples write one: per batch
  \`createImageBitmap(blob)\` for each image (all of the batch's images at once; the browser
  decodes them off the main thread) → canvas 2D \`drawImage\` at ${size}×${size} →
  \`getImageData\` → a hand-written loop \`(x / 255 − mean) / std\` into a planar Float32Array →
  \`new ort.Tensor('float32', data, dims)\` → \`session.run\`. The next batch is prepared while the
  model runs. On WebGPU, ONNX Runtime uploads the tensor.
- **Tandem**: \`ImageBatcher\` on ${threads} wasm pthreads (decode and resize straight into batch
  buffers) → \`OnnxFeeder\` (\`tandem/onnx\`) → \`session.run\` → \`dispose()\`. On WebGPU the feeder runs
  on ONNX Runtime's own device (\`ort.env.webgpu.device\`, adopted): upload ring, WGSL normalise,
  \`Tensor.fromGpuBuffer\`. On wasm it normalises on the CPU into the tensor's Float32Array.

On WebGPU the outputs stay on the GPU (\`preferredOutputLocation: 'gpu-buffer'\`, disposed, not
read), so each pass measures the input path and the model; reading the outputs back would add
the same readbacks to both paths. ORT's path reads its pixels from a canvas made with
\`willReadFrequently\` (kept on the CPU), and its \`getImageData\` per image is counted as a
canvas read. A pass ends when the GPU has finished
(\`onSubmittedWorkDone\`, not a readback). "The model alone" runs the same session as often on one
input made beforehand (on WebGPU a GPU buffer written once): the most either path could reach
here. A warm-up pass of each, then ${reps} interleaved
repetitions; medians, and the range of each repetition's ratio. Readbacks are counted by
test/shared/readbacks.ts during the pass, every kind: \`mapAsync(READ)\`, copies into \`MAP_READ\`
buffers or into a canvas's texture, canvas and WebGL reads, and ONNX Runtime's \`getData\` of GPU
tensors. ONNX Runtime's wasm provider ran with ${env.wasmThreads || 'its default number of'} thread(s).

**Same outputs.** Before the timings, the first batch goes through both paths and the run stops
unless (1) ONNX Runtime's own loop and tensor, given exactly Tandem's decoded pixels, give Tandem's
outputs within ${SAME_PIXELS_TOLERANCE} (this checks Tandem's feed: layout, order, normalisation,
the buffer handed over); (2) every canvas image is nearer to Tandem's pixels for the same image
than to any other image's (the canvas path feeds the right images, in order), within
${PIXEL_MEAN_TOLERANCE}/255 on average; and (3) the canvas path's outputs are within
${CANVAS_OUTPUT_TOLERANCE * 100}% of the largest output of Tandem's. The two resizes differ (the
canvas samples bilinearly; Tandem filters as PIL's antialiased bilinear does), so (2) and (3) are
tolerances measured on both corpora and set with room; the measured values are in the second
table of each corpus.

Chromium ${chromeVersion}, ONNX Runtime Web ${env.ort}, WebGPU adapter: ${env.adapter || 'unnamed'}${
    /swiftshader|llvmpipe|lavapipe/i.test(env.adapter)
      ? ` (a CPU adapter): the model runs on the same ${env.cores || hardwareConcurrency()} cores
as the decoding, so the absolute numbers say little about a real GPU; the ratio of the input paths
and the readback counts do.`
      : `, ${env.cores || hardwareConcurrency()} cores.`
  }

${lines.join('\n')}
${machineLines(uptimeStart, uptimeEnd, machine).join('\n')}
`,
);
log(`wrote ${outPath}`);
args.done(`${corpora.length} corpus(es), ${count} images, ${reps} repetition(s); Chromium ${chromeVersion}, ORT ${env.ort}`);
