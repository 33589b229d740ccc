// One runtime's share of bench/scaling.ts: plain JavaScript on the built package (dist/), so the
// same file runs under Node and Deno. Prints one JSON line: the machine's own two-thread scaling
// for compute-bound code (a JS loop in one, then two workers), and Tandem's decode pool with one
// and with two threads on the same images held in memory, repetitions interleaved.
//
//   node bench/scaling/child.mjs --corpus DIR [--images 600] [--reps 5] [--size 224]
//   deno run -A bench/scaling/child.mjs …
import { readdirSync, readFileSync } from 'node:fs';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { DecodePool } from '../../dist/index.js';
import { spreadImages } from '../shared/spread-images.mjs';

const { values } = parseArgs({
  options: {
    corpus: { type: 'string' },
    images: { type: 'string', default: '600' },
    reps: { type: 'string', default: '5' },
    size: { type: 'string', default: '224' },
  },
});
if (!values.corpus) throw new Error('--corpus DIR is required');
const reps = Number(values.reps);
const size = Number(values.size);

const images = spreadImages(values.corpus, Number(values.images));

// ---- the machine: a compute-bound loop (L1-resident, no allocation) in 1 and in 2 workers ----
const PROBE = `
  const { parentPort, workerData } = require('node:worker_threads');
  const a = new Int32Array(4096); let x = 1, n = 0; const end = Date.now() + workerData.ms;
  while (Date.now() < end) { for (let i = 0; i < 100000; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; a[i & 4095] += x; } n++; }
  parentPort.postMessage(n + (a[7] & 0));`;
async function probe(workers, ms = 700) {
  const runs = Array.from(
    { length: workers },
    () =>
      new Promise((resolve, reject) => {
        const w = new Worker(PROBE, { eval: true, workerData: { ms } });
        w.once('message', (n) => {
          resolve(n);
          void w.terminate();
        });
        w.once('error', reject);
      }),
  );
  const counts = await Promise.all(runs);
  return counts.reduce((a, b) => a + b, 0) / (ms / 1000);
}

// ---- the pool: CPU per OS thread, from /proc (Linux; empty elsewhere) ----
const TICK_MS = 10; // USER_HZ is 100 on Linux
function threadCpuMs() {
  const out = new Map();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, (Number(fields[11]) + Number(fields[12])) * TICK_MS);
    }
  } catch {}
  return out;
}

async function pass(pool) {
  const inFlight = 2 * pool.threads;
  const target = pool.malloc(size * size * 3 * inFlight);
  const before = { threadMs: pool.stats().threadMs, cpu: process.cpuUsage(), tasks: threadCpuMs() };
  const t0 = performance.now();
  let next = 0;
  const lane = async (k) => {
    for (let i = next++; i < images.length; i = next++)
      await pool.decodeInto(images[i], target + k * size * size * 3, { width: size, height: size, fit: 'cover' }).catch(() => {});
  };
  await Promise.all(Array.from({ length: inFlight }, (_, k) => lane(k)));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(before.cpu);
  const tasks = threadCpuMs();
  pool.free(target);
  const main = String(process.pid);
  const perThread = [...tasks].map(([tid, ms]) => ({ tid, ms: ms - (before.tasks.get(tid) ?? 0) })).sort((a, b) => b.ms - a.ms);
  const mainMs = perThread.find((t) => t.tid === main)?.ms ?? NaN;
  const poolMs = perThread
    .filter((t) => t.tid !== main)
    .slice(0, pool.threads)
    .map((t) => t.ms);
  return {
    imagesPerS: images.length / (wallMs / 1000),
    threadMsPerImage: (pool.stats().threadMs - before.threadMs) / images.length,
    busyShare: (pool.stats().threadMs - before.threadMs) / (pool.threads * wallMs),
    processCpuMsPerImage: (cpu.user + cpu.system) / 1000 / images.length,
    mainThreadCpuMsPerImage: mainMs / images.length,
    poolThreadCpuMsPerImage: poolMs.map((ms) => ms / images.length),
  };
}

const pools = { 1: await DecodePool.create({ threads: 1 }), 2: await DecodePool.create({ threads: 2 }) };
for (const t of [1, 2]) await pass(pools[t]); // V8 tiers the wasm up during the first images
const result = {
  runtime: typeof Deno === 'undefined' ? `Node ${process.version}` : `Deno ${Deno.version.deno}`,
  images: images.length,
  probe: { 1: [], 2: [] },
  pool: { 1: [], 2: [] },
};
for (let r = 0; r < reps; r++) {
  const order = r % 2 ? [2, 1] : [1, 2];
  for (const t of order) result.probe[t].push(await probe(t));
  for (const t of order) result.pool[t].push(await pass(pools[t]));
}
await Promise.all([pools[1].close(), pools[2].close()]);
console.log(JSON.stringify(result));
