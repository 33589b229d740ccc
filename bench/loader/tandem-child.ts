// One Tandem side of bench/loader.ts, in a process of its own, so that its CPU time and memory
// are its own. Two modes:
//
//   loader (default): the job bench/loader/torch_loader.py does with PyTorch's DataLoader —
//     list an ImageNet-style folder, read each file asynchronously (16 reads in flight), decode on
//     a DecodePool of --threads wasm pthreads into RGB --size² with fit 'cover' (= torchvision
//     Resize(size) + CenterCrop(size)), straight into u8 batches of --batch, touch a few bytes of
//     each batch and release it (--transform rrc: RandomResizedCrop + flip instead). Untimed setup: importing the library, creating the pool (its
//     threads start and the wasm module compiles there), listing the folder. Timed: the pipeline,
//     from its first pull to its last batch.
//     --api loader: the same job through the front door, `loader(folder, { batchSize, size,
//     transform, threads })`; its untimed setup is `await loader.classes()`, which lists the folder
//     and starts the pool, so both APIs time the same part.
//   ref: the native reference's wasm half — the files given by --ref (path:WxH,...) decoded at
//     full size, no resize, on a 1-thread pool (2 requests in flight so the thread never waits
//     for the event loop), each file for --seconds ÷ files; prints decodes/s per file.
//
// Prints one JSON line on stdout; progress and failures go to stderr.
//
//   deno run -A bench/loader/tandem-child.ts --corpus DIR [--images N] [--threads 2] [--batch 32] [--size 224]
//   node tandem-child.mjs --lib DIST ...     (bench/loader.ts transpiles this file for Node and
//                                              points --lib at the built dist/)
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

type Library = typeof import('../../src/index.ts');
type Runtime = typeof import('../../src/runtime/index.ts');

// node:util's parseArgs, as bench/shared/args.ts uses it; that module is not imported here because
// bench/loader.ts transpiles this one file alone for Node (into the cache, away from bench/).
const names = ['lib', 'corpus', 'images', 'threads', 'batch', 'size', 'reads', 'ref', 'seconds', 'transform', 'api'];
const { values } = parseArgs({
  args: process.argv.slice(2),
  options: Object.fromEntries(names.map((n) => [n, { type: 'string' as const }])),
  strict: true,
  allowPositionals: false,
});
const arg = (name: string): string | undefined => values[name] as string | undefined;
const num = (name: string, fallback: number): number => {
  const v = arg(name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (v === '' || !Number.isFinite(n)) throw new Error(`--${name} wants a number, got '${v}'`);
  return n;
};
const log = (line: string) => process.stderr.write(`[tandem-child] ${line}\n`);

/** utime + stime of this process, every thread (pool pthreads included), in seconds. */
function cpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ
}
function peakRssKb(): number {
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
}

const libDir = arg('lib');
const base = libDir ? pathToFileURL(resolve(libDir) + '/').href : new URL('../../src/', import.meta.url).href;
const ext = libDir ? '.js' : '.ts';
const lib = (await import(`${base}index${ext}`)) as Library;
const runtime = (await import(`${base}runtime/index${ext}`)) as Runtime;
const runtimeName = typeof (globalThis as { Deno?: unknown }).Deno === 'object' ? 'deno' : 'node';
const threads = num('threads', 2);

if (arg('ref') !== undefined) await referenceMode(arg('ref')!, num('seconds', 8));
else await loaderMode();

async function loaderMode(): Promise<void> {
  const corpus = arg('corpus');
  if (!corpus) throw new Error('--corpus DIR is required');
  const batchSize = num('batch', 32);
  const size = num('size', 224);
  const readConcurrency = num('reads', 16);

  const limit = num('images', 0);
  // 'rrc': the training transform, RandomResizedCrop + flip drawn in the decoder.
  const transform = arg('transform') ?? 'cover';
  if (arg('api') === 'loader') return frontDoorMode(corpus, limit, batchSize, size, readConcurrency, transform);
  const pool = await lib.DecodePool.create({ threads });
  const { files } = await lib.listImageFolder(corpus);
  const items = limit > 0 ? files.slice(0, limit) : files;
  const batcher = new lib.ImageBatcher(pool, {
    batchSize,
    height: size,
    width: size,
    channels: 3,
    buffers: 4,
    ...(transform === 'rrc' ? { randomCrop: { seed: 0 } } : { decode: { fit: 'cover' as const } }),
  });
  const pipeline = new lib.PipelineBuilder()
    .addSource(items)
    .pipe(async (f: { path: string; label: number }) => ({ bytes: await runtime.readFile(f.path), label: f.label, key: f.path }), {
      name: 'read',
      concurrency: readConcurrency,
    })
    .batch(batcher, { name: 'decode', concurrency: pool.maxInFlight })
    .addSink(2)
    .build();

  const timed = await consume(pipeline);
  const failures = pipeline.failures();
  for (const f of failures.slice(0, 5))
    log(`failed: ${f.stage} ${f.input}: ${f.error instanceof Error ? f.error.message : String(f.error)}`);
  await pipeline.stop();
  batcher.close();
  const mode = pool.stats().mode;
  await pool.close();
  if (timed.images + failures.length !== items.length)
    log(`unaccounted items: ${items.length} listed, ${timed.images} delivered, ${failures.length} failed`);
  printReport({ mode, listed: items.length, failures: failures.length, ...timed });
}

/** The timed part, the same for both APIs: every batch touched (a few bytes summed) and released. */
async function consume(batches: AsyncIterable<{ data: Uint8Array; count: number; release(): void }>) {
  const cpu0 = cpuSeconds();
  const t0 = performance.now();
  let firstBatch: number | undefined;
  let images = 0;
  let count = 0;
  let checksum = 0;
  for await (const batch of batches) {
    firstBatch ??= performance.now() - t0;
    const data = batch.data;
    for (let i = 0; i < data.length; i += 4099) checksum += data[i]!;
    images += batch.count;
    count++;
    batch.release();
  }
  return {
    images,
    batches: count,
    checksum,
    seconds: (performance.now() - t0) / 1000,
    firstBatchSeconds: (firstBatch ?? 0) / 1000,
    cpuSeconds: cpuSeconds() - cpu0,
  };
}

/** The one JSON line bench/loader.ts reads. */
function printReport(r: { mode: string | undefined; listed: number; failures: number } & Awaited<ReturnType<typeof consume>>): void {
  console.log(JSON.stringify({ runtime: runtimeName, threads, ...r, cpuTotalSeconds: cpuSeconds(), peakRssKb: peakRssKb() }));
}

async function frontDoorMode(
  corpus: string,
  limit: number,
  batchSize: number,
  size: number,
  reads: number,
  transform: string,
): Promise<void> {
  const listed = limit > 0 ? (await lib.listImageFolder(corpus)).files.slice(0, limit) : undefined;
  const data = lib.loader(listed ?? corpus, {
    batchSize,
    size,
    threads,
    readConcurrency: reads,
    transform: transform === 'rrc' ? 'random-crop' : 'cover',
  });
  await data.classes(); // untimed: lists the folder, starts the pool's threads, compiles the module
  const timed = await consume(data);
  const failures = data.failures();
  for (const f of failures.slice(0, 5)) log(`failed: ${f.stage} ${f.key}: ${f.error.message}`);
  const mode = data.output;
  await data.close();
  printReport({ mode, listed: listed?.length ?? timed.images + failures.length, failures: failures.length, ...timed });
}

async function referenceMode(list: string, seconds: number): Promise<void> {
  const files = list.split(',').map((entry) => {
    const m = /^(.*):(\d+)x(\d+)$/.exec(entry);
    if (!m) throw new Error(`--ref wants path:WxH,..., got ${entry}`);
    return { path: m[1]!, width: Number(m[2]), height: Number(m[3]) };
  });
  const pool = await lib.DecodePool.create({ threads: 1 });
  const lanes = 2;
  const slot = Math.max(...files.map((f) => f.width * f.height * 3));
  const target = pool.malloc(slot * lanes);
  const perFile: { path: string; width: number; height: number; decodesPerSecond: number }[] = [];
  const cpu0 = cpuSeconds();
  for (const f of files) {
    const bytes = await runtime.readFile(f.path);
    const options = { width: f.width, height: f.height, fit: 'stretch' as const, reducedScale: false, applyOrientation: false };
    const info = await pool.decodeInto(bytes, target, options);
    if (info.sourceWidth !== f.width || info.sourceHeight !== f.height)
      throw new Error(`${f.path}: decoded ${info.sourceWidth}x${info.sourceHeight}, expected ${f.width}x${f.height}`);
    const run = async (ms: number): Promise<{ n: number; ms: number }> => {
      let n = 0;
      const t0 = performance.now();
      const lane = async (k: number) => {
        while (performance.now() - t0 < ms) {
          await pool.decodeInto(bytes, target + k * slot, options);
          n++;
        }
      };
      await Promise.all(Array.from({ length: lanes }, (_, k) => lane(k)));
      return { n, ms: performance.now() - t0 };
    };
    await run(Math.min(250, (seconds * 1000) / files.length / 4)); // warm-up
    const r = await run((seconds * 1000) / files.length);
    perFile.push({ ...f, decodesPerSecond: r.n / (r.ms / 1000) });
  }
  const cpu = cpuSeconds() - cpu0;
  pool.free(target);
  await pool.close();
  console.log(JSON.stringify({ runtime: runtimeName, threads: 1, perFile, cpuSeconds: cpu }));
}
