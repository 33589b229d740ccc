/**
 * Sources benchmark. Run under Deno:
 *
 *   npx deno run -A bench/sources.ts [--reps 5] [--out docs/bench/sources.md] [--smoke]
 *
 * The same samples read five ways: WebDataset shards over HTTP from a 127.0.0.1 server, the loose
 * files over HTTP, the loose local files, the shards from local disk, and the loose files over HTTP
 * through the directory cache (cold first epoch, then warm second epoch). Every sample's bytes are
 * read in full. Median of REPS interleaved repetitions ($REPS or --reps, 5 by default) over $N samples
 * (2000 by default); prints a table and writes docs/bench/sources.md. --smoke (bench/shared/args.ts):
 * 200 samples in shards of 1 MiB, 1 repetition, the table written under test-results/bench-smoke/.
 */
import process from 'node:process';
import { DirectoryCache, isFailure, loadFiles, loadUrls, ShardStream, writeFolderShards, type LoadResult } from '../src/sources/index.ts';
import { payload } from '../test/shared/tar-helpers.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { machineLines, machineLoad } from './shared/machine.ts';
import { median, spread, times } from './shared/stats.ts';

declare const Deno: {
  writeTextFile(path: string, text: string): Promise<void>;
  writeFile(path: string, data: Uint8Array): Promise<void>;
  mkdir(path: string, options: { recursive: boolean }): Promise<void>;
  makeTempDir(options: { prefix: string }): Promise<string>;
  remove(path: string, options: { recursive: boolean }): Promise<void>;
  open(path: string): Promise<{ readable: ReadableStream<Uint8Array> }>;
  serve(
    options: { hostname: string; port: number; onListen?: () => void },
    handler: (request: Request) => Promise<Response>,
  ): { addr: { port: number }; shutdown(): Promise<void> };
  version: { deno: string };
};

const args = benchArgs('sources', {
  reps: { type: 'number', default: Number(process.env.REPS ?? 5), smoke: 1 },
  out: { type: 'string', default: new URL('../docs/bench/sources.md', import.meta.url).pathname, smoke: smokeOut('bench-sources.md') },
});
const REPS = args.values.reps;
const loadAtStart = machineLoad();
const N = Number(process.env.N ?? (args.smoke ? 200 : 2000));
const CLASSES = 10;
const CONCURRENCY = 16;
const SHARD_BYTES = args.smoke ? 1 << 20 : 4 << 20;

// ---- data: N files of 8..40 KB (JPEG-like sizes) in ImageNet layout, and the same as shards ----
const root = await Deno.makeTempDir({ prefix: 'tandem-bench-sources-' });
const paths: string[] = [];
let totalBytes = 0;
for (let c = 0; c < CLASSES; c++) await Deno.mkdir(`${root}/data/class${c}`, { recursive: true });
for (let i = 0; i < N; i++) {
  const bytes = payload(8192 + ((i * 7919) % 32768), i);
  const path = `data/class${i % CLASSES}/${String(i).padStart(6, '0')}.jpg`;
  await Deno.writeFile(`${root}/${path}`, bytes);
  paths.push(path);
  totalBytes += bytes.length;
}
const manifest = await writeFolderShards(`${root}/data`, { out: `${root}/shards`, shardBytes: SHARD_BYTES, seed: 1 });
const shardPaths = manifest.shards.map((s) => `shards/${s.name}`);

// ---- a static file server on 127.0.0.1, streaming files from disk ----
let requests = 0;
const server = Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: () => undefined }, async (request) => {
  requests++;
  const path = decodeURIComponent(new URL(request.url).pathname);
  try {
    return new Response((await Deno.open(`${root}${path}`)).readable);
  } catch {
    return new Response('not found', { status: 404 });
  }
});
const base = `http://127.0.0.1:${server.addr.port}`;

// ---- the variants; each returns samples/s and checks it saw every sample ----
async function timed(run: () => Promise<number>): Promise<number> {
  const t0 = performance.now();
  const samples = await run();
  const seconds = (performance.now() - t0) / 1000;
  if (samples !== N) throw new Error(`read ${samples} of ${N} samples`);
  return samples / seconds;
}

async function countShards(names: string[], workers: number): Promise<number> {
  // `workers` streams of this one rank, each reading its own shards, running concurrently.
  const counts = await Promise.all(
    Array.from({ length: workers }, async (_, workerId) => {
      let n = 0;
      for await (const item of new ShardStream(names, { seed: 3, bufferSize: 256, workerId, numWorkers: workers })) {
        if (isFailure(item)) throw item.error;
        n++;
      }
      return n;
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}

async function countLoads(results: AsyncIterable<LoadResult<string>>): Promise<number> {
  let n = 0;
  for await (const r of results) {
    if (isFailure(r)) throw r.error;
    n++;
  }
  return n;
}

const variants: Record<string, () => Promise<number>> = {
  'loose local files (16 reads in flight)': () =>
    timed(() =>
      countLoads(
        loadFiles(
          paths.map((p) => `${root}/${p}`),
          { concurrency: CONCURRENCY },
        ),
      ),
    ),
  'shards, local files (1 stream)': () =>
    timed(() =>
      countShards(
        shardPaths.map((p) => `${root}/${p}`),
        1,
      ),
    ),
  'loose files over HTTP (16 requests in flight)': () =>
    timed(() =>
      countLoads(
        loadUrls(
          paths.map((p) => `${base}/${p}`),
          { concurrency: CONCURRENCY },
        ),
      ),
    ),
  'shards over HTTP (1 stream)': () =>
    timed(() =>
      countShards(
        shardPaths.map((p) => `${base}/${p}`),
        1,
      ),
    ),
  'shards over HTTP (4 worker streams)': () =>
    timed(() =>
      countShards(
        shardPaths.map((p) => `${base}/${p}`),
        4,
      ),
    ),
};

let cacheRun = 0;
async function cacheEpochs(): Promise<{ cold: number; warm: number; warmRequests: number }> {
  const cache = await DirectoryCache.open(`${root}/cache-${cacheRun++}`, { maxBytes: 2 * totalBytes });
  const urls = paths.map((p) => `${base}/${p}`);
  const epoch = () =>
    timed(async () => {
      let n = 0;
      for await (const r of loadUrls(urls, { concurrency: CONCURRENCY, cache })) {
        if (isFailure(r)) throw r.error;
        n++;
      }
      return n;
    });
  const cold = await epoch();
  const before = requests;
  const warm = await epoch();
  return { cold, warm, warmRequests: requests - before };
}

async function shardCacheEpochs(): Promise<{ cold: number; warm: number; warmRequests: number }> {
  const cache = await DirectoryCache.open(`${root}/cache-${cacheRun++}`, { maxBytes: 2 * totalBytes });
  const urls = shardPaths.map((p) => `${base}/${p}`);
  const epoch = () =>
    timed(async () => {
      let n = 0;
      for await (const item of new ShardStream(urls, { seed: 3, bufferSize: 256, cache })) {
        if (isFailure(item)) throw item.error;
        n++;
      }
      return n;
    });
  const cold = await epoch();
  const before = requests;
  const warm = await epoch();
  return { cold, warm, warmRequests: requests - before };
}

const results: Record<string, number[]> = {};
const add = (k: string, v: number) => {
  console.error(`  ${k}: ${v.toFixed(0)}`);
  (results[k] ??= []).push(v);
};
let warmRequests = 0;
// Repetition 0 warms the JIT, the page cache and the connection pool; it is not recorded.
for (let rep = 0; rep <= REPS; rep++) {
  console.error(rep === 0 ? 'warm-up' : `rep ${rep}/${REPS}`);
  const record = (k: string, v: number) => (rep === 0 ? undefined : add(k, v));
  for (const [name, run] of Object.entries(variants)) record(name, await run());
  const cache = await cacheEpochs();
  record('loose files over HTTP + directory cache, epoch 1 (cold)', cache.cold);
  record('loose files over HTTP + directory cache, epoch 2 (warm)', cache.warm);
  const shardCache = await shardCacheEpochs();
  record('shards over HTTP + directory cache, epoch 1 (cold)', shardCache.cold);
  record('shards over HTTP + directory cache, epoch 2 (warm)', shardCache.warm);
  if (rep > 0) warmRequests += cache.warmRequests + shardCache.warmRequests;
}
await server.shutdown();
await Deno.remove(root, { recursive: true });

const reference = median(results['loose files over HTTP (16 requests in flight)']!);
const local = median(results['loose local files (16 reads in flight)']!);
const rows = Object.entries(results).map(([k, v]) => {
  const r = spread(v);
  return `| ${k} | ${r.median.toFixed(0)} | ${r.min.toFixed(0)} | ${r.max.toFixed(0)} | ${times(r.median / reference)} | ${times(r.median / local)} |`;
});
const table = [
  '| source | samples/s (median) | min | max | vs loose over HTTP | vs loose local |',
  '|---|---:|---:|---:|---:|---:|',
  ...rows,
].join('\n');
console.log(table);
console.log(`requests reaching the server during warm epochs: ${warmRequests}`);

const loadAtEnd = machineLoad();
const doc = `# Sources benchmark

Command: \`npx deno run -A bench/sources.ts\` (Deno ${Deno.version.deno}), ${REPS} interleaved repetitions after one unrecorded warm-up, median (min, max).
${N} samples of 8–40 KB (${(totalBytes / 1024 ** 2).toFixed(1)} MiB, JPEG-like sizes; random bytes, no decoding) in ImageNet
layout, and the same samples as ${manifest.shards.length} WebDataset shards of ≤ ${SHARD_BYTES >> 20} MiB written by \`writeFolderShards\`.
The HTTP server is \`Deno.serve\` on 127.0.0.1 in the same process, streaming each file from disk (so it shares the
event loop and the 2 cores with the client: absolute rates are pessimistic, ratios are the point). Every sample's bytes are
read in full; shard streams use a 256-sample shuffle buffer. The cache rows read the loose files, or the shards, over HTTP through
a fresh \`DirectoryCache\` per repetition: epoch 1 fetches and stores (shards are written to the cache as they
stream), epoch 2 reads only the cache (requests reaching the server during warm epochs, all repetitions: **${warmRequests}**).
Page cache warm.

${machineLines(loadAtStart, loadAtEnd).join('\n')}

${table}
`;
await Deno.writeTextFile(args.values.out, doc);
args.done(`${rows.length} sources over ${N} samples; ${warmRequests} requests during warm epochs`);
