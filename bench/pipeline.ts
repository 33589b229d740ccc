/**
 * Pipeline engine benchmark. Run under Deno (Node 20 cannot run .ts directly):
 *
 *   npx deno run -A bench/pipeline.ts [--reps 5] [--out docs/bench/pipeline.md] [--smoke]
 *
 * Median of 5 interleaved repetitions (or $REPS, or --reps); prints a table and writes
 * docs/bench/pipeline.md. --smoke (bench/shared/args.ts): 5000 items (200 for the worker figures),
 * 1 repetition, the table written under test-results/bench-smoke/.
 */
import process from 'node:process';
import { customTask, PipelineBuilder, WorkerPoolExecutor, workerTask } from '../src/pipeline/index.ts';
import { benchArgs, smokeOut } from './shared/args.ts';
import { machineLines, machineLoad } from './shared/machine.ts';
import { quantile, spread } from './shared/stats.ts';

declare const Deno: { writeTextFile(path: string, text: string): Promise<void>; version: { deno: string } };

const args = benchArgs('pipeline', {
  reps: { type: 'number', default: Number(process.env.REPS ?? 5), smoke: 1 },
  out: { type: 'string', default: new URL('../docs/bench/pipeline.md', import.meta.url).pathname, smoke: smokeOut('bench-pipeline.md') },
});
const REPS = args.values.reps;
const loadAtStart = machineLoad();
const N = args.smoke ? 5000 : 100_000;
const WORKER_N = args.smoke ? 200 : 3000;
const workerModule = new URL('../test/fixtures/worker-module.mjs', import.meta.url);

async function drain(p: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of p);
}

async function noop(stages: number, kind: 'sync' | 'async'): Promise<number> {
  const src = Array.from({ length: N }, (_, i) => i);
  let b = new PipelineBuilder<number>().addSource(src);
  for (let i = 0; i < stages; i++) {
    b = kind === 'sync' ? b.pipe((x: number) => x, { queueSize: 64 }) : b.pipe(async (x: number) => x, { queueSize: 64 });
  }
  const t0 = performance.now();
  await drain(b.addSink(64).build());
  return performance.now() - t0;
}

async function workerPerItem(concurrency: number): Promise<number> {
  const pool = new WorkerPoolExecutor(workerTask(workerModule, 'echo'), concurrency);
  const p = new PipelineBuilder<number>()
    .addSource(Array.from({ length: WORKER_N }, (_, i) => i))
    .pipe(
      customTask('echo', () => pool),
      { concurrency },
    )
    .build();
  await p.next(); // exclude worker start-up
  const t0 = performance.now();
  await drain(p);
  return ((performance.now() - t0) / (WORKER_N - 1)) * 1000;
}

async function rawRoundTrip(): Promise<number> {
  const src = 'onmessage = (e) => postMessage(e.data);';
  const url = URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
  const w = new Worker(url, { type: 'module' });
  let resolve: () => void = () => {};
  w.onmessage = () => resolve();
  const once = (i: number) => new Promise<void>((r) => ((resolve = r), w.postMessage(i)));
  await once(-1);
  const t0 = performance.now();
  for (let i = 0; i < WORKER_N; i++) await once(i);
  const us = ((performance.now() - t0) / WORKER_N) * 1000;
  w.terminate();
  URL.revokeObjectURL(url);
  return us;
}

async function poolDirect(): Promise<number> {
  const pool = new WorkerPoolExecutor(workerTask(workerModule, 'echo'), 1);
  const signal = new AbortController().signal;
  await pool.run(-1, signal);
  const t0 = performance.now();
  for (let i = 0; i < WORKER_N; i++) await pool.run(i, signal);
  const us = ((performance.now() - t0) / WORKER_N) * 1000;
  await pool.close();
  return us;
}

/** Timer lag beyond 1 ms summed over `ms` of doing nothing: the sampler's own floor. */
async function lagFloor(ms: number): Promise<number> {
  let lag = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const t = performance.now();
    await new Promise((r) => setTimeout(r, 1));
    lag += Math.max(0, performance.now() - t - 1);
  }
  return lag / ms;
}

/**
 * Main-thread idle share while one worker spins: 1 − (timer lag beyond 1 ms) / wall time,
 * minus the same ratio measured with nothing running (timer granularity, scheduler noise).
 */
async function idleWhileWorkersBusy(): Promise<{ idle: number; p99LagMs: number }> {
  const pool = new WorkerPoolExecutor(workerTask(workerModule, 'spin'), 1);
  const p = new PipelineBuilder<number>()
    .addSource(Array.from({ length: 60 }, () => 10))
    .pipe(
      customTask('spin', () => pool),
      { concurrency: 1 },
    )
    .build();
  await p.next();
  const lags: number[] = [];
  let running = true;
  const sampler = (async () => {
    while (running) {
      const t = performance.now();
      await new Promise((r) => setTimeout(r, 1));
      lags.push(Math.max(0, performance.now() - t - 1));
    }
  })();
  const t0 = performance.now();
  await drain(p);
  const wall = performance.now() - t0;
  running = false;
  await sampler;
  const blocked = lags.reduce((a, b) => a + b, 0);
  const floor = await lagFloor(wall);
  return { idle: Math.min(1, Math.max(0, 1 - (blocked / wall - floor))), p99LagMs: lags.length ? quantile(lags, 0.99) : 0 };
}

const r: Record<string, number[]> = {};
const add = (k: string, v: number) => {
  console.error(`  ${k}: ${v.toFixed(2)}`);
  (r[k] ??= []).push(v);
};
for (let rep = 0; rep < REPS; rep++) {
  const base = await noop(0, 'sync');
  const sync5 = await noop(5, 'sync');
  const async5 = await noop(5, 'async');
  add('source only, items/s', (N / base) * 1000);
  add('5 sync no-op stages, items/s', (N / sync5) * 1000);
  add('5 async no-op stages, items/s', (N / async5) * 1000);
  add('sync stage overhead, µs/item/stage', ((sync5 - base) / N / 5) * 1000);
  add('async stage overhead, µs/item/stage', ((async5 - base) / N / 5) * 1000);
  add('raw postMessage round trip, µs/item', await rawRoundTrip());
  add('pool.run() directly, 1 worker, µs/item', await poolDirect());
  add('worker executor, 1 worker, µs/item', await workerPerItem(1));
  add('worker executor, 2 workers, µs/item', await workerPerItem(2));
  const elu = await idleWhileWorkersBusy();
  add('event loop idle while a worker spins, %', elu.idle * 100);
  add('timer lag p99 while a worker spins, ms', elu.p99LagMs);
}

const rows = Object.entries(r).map(([k, v]) => {
  const { median, min, max } = spread(v);
  return [k, median, min, max] as const;
});
const fmt = (x: number) => (x >= 1000 ? x.toFixed(0) : x.toPrecision(3));
const table = [
  '| measure | median | min | max |',
  '|---|---:|---:|---:|',
  ...rows.map(([k, m, lo, hi]) => `| ${k} | ${fmt(m)} | ${fmt(lo)} | ${fmt(hi)} |`),
].join('\n');
console.log(table);

const loadAtEnd = machineLoad();
const doc = `# Pipeline engine benchmark

Command: \`npx deno run -A bench/pipeline.ts\` (Deno ${Deno.version.deno}), ${REPS} interleaved repetitions,
median (min, max). ${N} items for the no-op pipelines, ${WORKER_N} for the worker figures. The machine is
shared with other work, so read ratios rather than absolute times.

${machineLines(loadAtStart, loadAtEnd).join('\n')}

${table}

Goals: ≤ 2 µs per item per stage of engine overhead; event loop > 95% idle while workers are busy.
"Idle" is estimated from a 1 ms timer chain: the time the timers fired late, over the wall time;
"p99" is the 0.99-quantile of those lags, interpolated between the two nearest (bench/shared/stats.ts).
`;
await Deno.writeTextFile(args.values.out, doc);
const engine = rows.find(([k]) => k.startsWith('sync stage overhead'));
args.done(`${rows.length} measures; sync stage overhead ${engine ? engine[1].toFixed(3) : '?'} µs/item/stage`);
