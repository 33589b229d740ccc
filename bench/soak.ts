/**
 * Soak: a long run of the loader and of the pipeline engine, watching what must not grow.
 *
 *   npx deno run -A bench/soak.ts [--images 200000] [--items 1000000] [--out docs/bench/soak.md] [--smoke]
 *
 * Part 1 decodes `--images` JPEGs (16 generated images of 160×120 with varied content, four of
 * them broken, round and round) through the loader as users build it: source → decode on a
 * 2-thread pool into batch buffers → batches of 32, consumed and released; every 5000th batch it
 * also stops the pipeline and starts a new one, as an epoch boundary does. Part 2 pushes
 * `--items` numbers through a 4-stage pipeline (sync, async with concurrency 8, an aggregate of
 * 16 and its disaggregate). After a warm-up of 10% of each part, it samples the process RSS, the
 * wasm memory, the pool's live workers and the active timers/handles (Node's
 * getActiveResourcesInfo, which Deno implements) every 0.5 s; the table gives the first sample
 * after warm-up, the largest, and the last. --smoke (bench/shared/args.ts): 2000 images and 20000
 * items, the report under test-results/bench-smoke/.
 */
import process from 'node:process';
import { DecodePool, ImageBatcher, type EncodedImage } from '../src/decode/index.ts';
import { PipelineBuilder } from '../src/pipeline/index.ts';
import { encodeJpeg, renderSample } from '../src/synthetic/index.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { machineLines, machineLoad } from './shared/machine.ts';

declare const Deno: { writeTextFile(path: string, text: string): Promise<void>; version: { deno: string } };

const args = benchArgs('soak', {
  images: { type: 'number', default: 200_000, smoke: 2000 },
  items: { type: 'number', default: 1_000_000, smoke: 20_000 },
  out: { type: 'string', default: 'docs/bench/soak.md', smoke: smokeOut('soak.md') },
});
const IMAGES = args.values.images;
const ITEMS = args.values.items;
const OUT = args.values.out;
const BATCH = 32;
const MiB = 1024 * 1024;

interface Sample {
  done: number;
  seconds: number;
  rssMiB: number;
  heapMiB: number;
  wasmMiB: number;
  liveWorkers: number;
  handles: number;
}

function images(): EncodedImage[] {
  return Array.from({ length: 16 }, (_, i) => {
    const s = renderSample(3, i, { width: 160, height: 120, classes: 4 });
    const bytes = encodeJpeg(s.rgb, s.width, s.height, { quality: 85 });
    // Four broken: cut short, not an image, empty, a damaged header.
    const broken =
      i === 3 ? bytes.subarray(0, 300) : i === 7 ? new TextEncoder().encode('not an image') : i === 11 ? new Uint8Array(0) : undefined;
    if (i === 15) {
      const damaged = bytes.slice();
      damaged.fill(0xff, 2, 40);
      return { bytes: damaged, label: s.label, key: `img${i}` };
    }
    return { bytes: broken ?? bytes, label: s.label, key: `img${i}` };
  });
}

function sampler(pool: DecodePool | undefined, t0: number, done: () => number) {
  const samples: Sample[] = [];
  const take = () =>
    samples.push({
      done: done(),
      seconds: (performance.now() - t0) / 1000,
      rssMiB: process.memoryUsage().rss / MiB,
      heapMiB: process.memoryUsage().heapUsed / MiB,
      wasmMiB: pool ? pool.memory.buffer.byteLength / MiB : 0,
      liveWorkers: pool ? pool.stats().liveWorkers : 0,
      handles: process.getActiveResourcesInfo().length,
    });
  take();
  const timer = setInterval(take, 500);
  return {
    samples,
    stop() {
      clearInterval(timer);
      take();
    },
  };
}

async function soakLoader(): Promise<{ samples: Sample[]; delivered: number; failed: number; seconds: number; restarts: number }> {
  const pool = await DecodePool.create({ threads: 2 });
  const batcher = new ImageBatcher(pool, { batchSize: BATCH, height: 64, width: 64, buffers: 4 });
  const set = images();
  let delivered = 0;
  let failed = 0;
  let restarts = 0;
  let fed = 0;
  const warmup = Math.floor(IMAGES / 10);
  let watch: ReturnType<typeof sampler> | undefined;
  const t0 = performance.now();
  try {
    while (fed < IMAGES) {
      const run = Math.min(IMAGES - fed, 5000 * BATCH);
      const source = (function* () {
        for (let i = 0; i < run; i++) yield set[(fed + i) % set.length]!;
      })();
      const pipeline = new PipelineBuilder()
        .addSource(source)
        .pipe(batcher.decodeStage, { name: 'decode', concurrency: 4 })
        .aggregate(() => batcher.aggregator(), { name: 'batch' })
        .addSink(2)
        .build();
      for await (const batch of pipeline) {
        delivered += batch.count;
        batch.release();
        if (!watch && delivered + failed >= warmup) watch = sampler(pool, t0, () => delivered);
      }
      failed += pipeline.failureCount();
      fed += run;
      restarts++;
    }
  } finally {
    watch?.stop();
    batcher.close();
    await pool.close();
  }
  return { samples: watch?.samples ?? [], delivered, failed, seconds: (performance.now() - t0) / 1000, restarts };
}

async function soakPipeline(): Promise<{ samples: Sample[]; delivered: number; seconds: number }> {
  let delivered = 0;
  const warmup = Math.floor(ITEMS / 10);
  let watch: ReturnType<typeof sampler> | undefined;
  const t0 = performance.now();
  const source = (function* () {
    for (let i = 0; i < ITEMS; i++) yield i;
  })();
  const pipeline = new PipelineBuilder<number>()
    .addSource(source)
    .pipe((x: number) => x * 2, { name: 'double' })
    .pipe(async (x: number) => x + 1, { name: 'async', concurrency: 8 })
    .aggregate(16)
    .disaggregate()
    .addSink(64)
    .build();
  let checksum = 0;
  for await (const x of pipeline) {
    checksum += x;
    delivered++;
    if (!watch && delivered >= warmup) watch = sampler(undefined, t0, () => delivered);
  }
  watch?.stop();
  const want = ITEMS * (ITEMS - 1) + ITEMS;
  if (checksum !== want) throw new Error(`pipeline soak: checksum ${checksum}, expected ${want}`);
  return { samples: watch?.samples ?? [], delivered, seconds: (performance.now() - t0) / 1000 };
}

function rows(samples: Sample[]): string[] {
  if (samples.length === 0) return ['| (no samples) | | | | | |'];
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  const peak = (k: keyof Sample) => Math.max(...samples.map((s) => s[k]));
  const fmt = (s: Pick<Sample, 'rssMiB' | 'heapMiB' | 'wasmMiB' | 'liveWorkers' | 'handles'>) =>
    `${s.rssMiB.toFixed(1)} | ${s.heapMiB.toFixed(1)} | ${s.wasmMiB.toFixed(1)} | ${s.liveWorkers} | ${s.handles}`;
  return [
    `| first after warm-up (${first.done} done, ${first.seconds.toFixed(0)} s) | ${fmt(first)} |`,
    `| largest over ${samples.length} samples | ${fmt({ rssMiB: peak('rssMiB'), heapMiB: peak('heapMiB'), wasmMiB: peak('wasmMiB'), liveWorkers: peak('liveWorkers'), handles: peak('handles') })} |`,
    `| last (${last.done} done, ${last.seconds.toFixed(0)} s) | ${fmt(last)} |`,
  ];
}

const load = machineLoad();
console.log(`[soak] ${IMAGES} images, then ${ITEMS} pipeline items; ${load}`);
const loader = await soakLoader();
console.log(
  `[soak] loader: ${loader.delivered} delivered, ${loader.failed} failed in ${loader.seconds.toFixed(0)} s, ${loader.restarts} pipelines`,
);
const engine = await soakPipeline();
console.log(`[soak] pipeline: ${engine.delivered} items in ${engine.seconds.toFixed(0)} s`);
const afterLoad = machineLoad();

const growth = (s: Sample[], k: 'rssMiB' | 'wasmMiB') => (s.length ? Math.max(...s.map((x) => x[k])) - s[0]![k] : NaN);
const text = `# Soak

\`\`\`sh
npx deno run -A bench/soak.ts --images ${IMAGES} --items ${ITEMS}
\`\`\`

Deno ${Deno.version.deno}, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC.

${machineLines(load, afterLoad).join('\n')}

## The loader: ${loader.delivered + loader.failed} images

16 generated 160×120 JPEGs (four broken: cut, not an image, empty, damaged header), round and
round, decoded on a 2-thread pool into 64×64 batches of ${BATCH} and released; a new pipeline every
${5000 * BATCH} images (${loader.restarts} pipelines). ${loader.delivered} delivered, ${loader.failed} reported as failed
(every item accounted for: ${loader.delivered + loader.failed === IMAGES ? 'yes' : 'NO'}), ${loader.seconds.toFixed(0)} s.

| sample | RSS MiB | JS heap used MiB | wasm memory MiB | live workers | active handles/timers |
|---|---|---|---|---|---|
${rows(loader.samples).join('\n')}

After warm-up RSS grew by at most ${growth(loader.samples, 'rssMiB').toFixed(1)} MiB and wasm memory by ${growth(loader.samples, 'wasmMiB').toFixed(1)} MiB.

## The pipeline engine: ${engine.delivered} items

A sync stage, an async stage with concurrency 8, an aggregate of 16 and its disaggregate; the
sum of what came out is checked. ${engine.seconds.toFixed(0)} s.

| sample | RSS MiB | JS heap used MiB | wasm memory MiB | live workers | active handles/timers |
|---|---|---|---|---|---|
${rows(engine.samples).join('\n')}

After warm-up RSS grew by at most ${growth(engine.samples, 'rssMiB').toFixed(1)} MiB.
`;
await Deno.writeTextFile(OUT, text);
console.log(text);
args.done(
  `${loader.delivered} images delivered, ${loader.failed} failed, ${engine.delivered} pipeline items; RSS grew ${growth(loader.samples, 'rssMiB').toFixed(1)} MiB`,
);
