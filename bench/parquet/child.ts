// One Tandem side of bench/parquet.ts, in a process of its own so its CPU time and memory are its
// own. Deno runs this file; Node runs it transpiled with src/ beside it (bench/parquet/node-build.ts).
// Three modes, each printing one JSON line on stdout:
//
//   --mode images --source S   loader(S, { batchSize, size, transform: 'cover', threads, readConcurrency })
//       to 'cpu' u8 batches, each touched (a few bytes summed) and released, as
//       bench/loader/tandem-child.ts does; S is a folder (root/<class>/<image>) or
//       `parquet:PATH_OR_URL` ({ parquet: [it] }). With --images N a folder is its listing's first N
//       files (the Parquet file holds the same N rows). Untimed: importing, `await loader.classes()`
//       (lists the folder / reads the Parquet footer, starts the decode pool). Timed: the first pull
//       to the last batch.
//   --mode stream --source parquet:PATH   the same loop over a large file with small batches, this
//       process's RSS (VmRSS) read every --every batches: memory over the run, not only its peak.
//   --mode text --source S --tokenizer FILE   textLoader(S, { tokenizer: { json }, tokenizerWorkers,
//       seqLen, batchSize, eos, pack: 'best-fit' }) to 'cpu'; S is `parquet:PATH`, `texts:DOCS.json`
//       (the documents in memory, read before the timer) or `folder:DIR` (one text file a document).
//       Timed: the loader's creation to its last batch; tokens are the batches' non-padding positions.
//
//   deno run -A bench/parquet/child.ts --mode images --source parquet:/x.parquet [--images N] [--batch 32]
//        [--size 224] [--threads 2] [--reads 16]
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { listImageFolder, loader } from '../../src/index.ts';
import { textLoader } from '../../src/text/index.ts';

const names = ['mode', 'source', 'images', 'batch', 'size', 'threads', 'reads', 'every', 'tokenizer', 'seq', 'eos', 'workers'];
const { values } = parseArgs({
  args: process.argv.slice(2),
  options: Object.fromEntries(names.map((n) => [n, { type: 'string' as const }])),
  strict: true,
  allowPositionals: false,
});
const arg = (name: string): string => {
  const v = values[name];
  if (typeof v !== 'string') throw new Error(`--${name} is required`);
  return v;
};
const num = (name: string, fallback: number): number => {
  const v = values[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (v === '' || !Number.isFinite(n)) throw new Error(`--${name} wants a number, got '${String(v)}'`);
  return n;
};
const log = (line: string) => process.stderr.write(`[parquet-child] ${line}\n`);
const runtime = typeof (globalThis as { Deno?: unknown }).Deno === 'object' ? 'deno' : 'node';

/** utime + stime of this process, every thread (the pool's and tokenizer's threads included), in seconds. */
function cpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ
}
const status = (field: string): number =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);

const mode = arg('mode');
const source = arg('source');
const threads = num('threads', 2);

if (mode === 'images' || mode === 'stream') await images();
else if (mode === 'text') await text();
else throw new Error(`--mode wants images, stream or text, got ${mode}`);

async function images(): Promise<void> {
  const limit = num('images', 0);
  const every = num('every', 0);
  let spec: Parameters<typeof loader>[0];
  if (source.startsWith('parquet:')) spec = { parquet: [source.slice('parquet:'.length)] };
  else spec = limit > 0 ? (await listImageFolder(source)).files.slice(0, limit) : source;
  const data = loader(spec, {
    batchSize: num('batch', 32),
    size: num('size', 224),
    threads,
    readConcurrency: num('reads', 16),
    transform: 'cover',
  });
  const classes = await data.classes(); // untimed: lists the folder or reads the footer, starts the pool
  const rss: { images: number; rssKb: number }[] = [{ images: 0, rssKb: status('VmRSS') }];
  const cpu0 = cpuSeconds();
  const t0 = performance.now();
  let firstBatch: number | undefined;
  let count = 0;
  let delivered = 0;
  let checksum = 0;
  for await (const batch of data) {
    firstBatch ??= performance.now() - t0;
    const bytes = batch.data;
    for (let i = 0; i < bytes.length; i += 4099) checksum += bytes[i] ?? 0;
    delivered += batch.count;
    count++;
    batch.release();
    if (every > 0 && count % every === 0) rss.push({ images: delivered, rssKb: status('VmRSS') });
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds() - cpu0;
  rss.push({ images: delivered, rssKb: status('VmRSS') });
  const failures = data.failures();
  for (const f of failures.slice(0, 5)) log(`failed: ${f.stage} ${f.key}: ${f.error.message}`);
  await data.close();
  console.log(
    JSON.stringify({
      runtime,
      threads,
      classes: classes.length,
      images: delivered,
      failures: failures.length,
      batches: count,
      checksum,
      seconds,
      firstBatchSeconds: (firstBatch ?? 0) / 1000,
      cpuSeconds: cpu,
      peakRssKb: status('VmHWM'),
      ...(every > 0 ? { rss } : {}),
    }),
  );
}

async function text(): Promise<void> {
  const seqLen = num('seq', 256);
  const batchSize = num('batch', 8);
  const tokenizer = { json: readFileSync(arg('tokenizer'), 'utf8') };
  let spec: Parameters<typeof textLoader>[0];
  if (source.startsWith('parquet:')) spec = { parquet: [source.slice('parquet:'.length)] };
  else if (source.startsWith('texts:')) spec = { texts: JSON.parse(readFileSync(source.slice('texts:'.length), 'utf8')) as string[] };
  else if (source.startsWith('folder:')) spec = source.slice('folder:'.length);
  else throw new Error(`--source wants parquet:, texts: or folder:, got ${source}`);
  const cpu0 = cpuSeconds();
  const t0 = performance.now();
  const data = textLoader(spec, {
    tokenizer,
    tokenizerWorkers: num('workers', 2),
    seqLen,
    batchSize,
    eos: num('eos', 0),
    pack: 'best-fit',
    to: 'cpu',
  });
  let firstBatch: number | undefined;
  let tokens = 0;
  let rows = 0;
  let batches = 0;
  let hash = 0x811c9dc5;
  try {
    for await (const b of data) {
      firstBatch ??= performance.now() - t0;
      tokens += b.count * seqLen - b.padding;
      rows += b.count;
      batches++;
      // FNV-1a over the first ids of each row: the sides must pack the same documents alike.
      for (let r = 0; r < b.count; r++) hash = Math.imul(hash ^ (b.inputs[r * seqLen] ?? 0), 0x01000193) >>> 0;
      b.release();
    }
  } finally {
    await data.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  console.log(
    JSON.stringify({
      runtime,
      tokens,
      rows,
      batches,
      hash,
      seconds,
      firstBatchSeconds: (firstBatch ?? 0) / 1000,
      cpuSeconds: cpuSeconds() - cpu0,
      peakRssKb: status('VmHWM'),
    }),
  );
}
