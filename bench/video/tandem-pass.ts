// One pass of Tandem's videoLoader for bench/video-peers.ts, in a process of its own so that its
// CPU, bytes read and peak memory are its own: the wasm road to CPU clips (u8, NFHWC) from video
// files by path, with `threads` pool threads. An untimed pass first (the pool's threads start,
// the module compiles, the files are opened once), then the timed pass over the same clips.
//
//   npx deno run -A bench/video/tandem-pass.ts PLAN.json
// PLAN.json: { threads, batch, frames, stride, size, seed, clipsPerVideo, videos: [path],
//              times: { "<path>#<clip>": [s, …] } } — the clips the peer decodes, checked here.
// Prints one JSON line: seconds, cpu (this process's utime + stime over the timed pass, from
// /proc), readBytes (/proc/self/io rchar over it), loaderBytes (the loader's own count of bytes
// read, loader.reads()), decodes (loader.decodes(): clips, jobs, shared), peakRssMb (VmHWM), clips, failures, wrongTimes, firstError, and stages
// (per pipeline stage: its working time per clip and its median task, in ms), and threads (CPU seconds
// over the timed pass per kind of thread: main, pool, v8, runtime).
import { readdirSync, readFileSync } from 'node:fs';
import process from 'node:process';
import { DecodePool } from '../../src/decode/index.ts';
import { videoLoader } from '../../src/video/index.ts';
import { processCpuSeconds } from '../shared/cpu.ts';

interface Plan {
  threads: number;
  batch: number;
  frames: number;
  stride: number;
  size: number;
  seed: number;
  clipsPerVideo: number;
  videos: string[];
  times: Record<string, number[]>;
}

const plan = JSON.parse(readFileSync(Deno.args[0] ?? '', 'utf8')) as Plan;
const TICKS = 100; // USER_HZ on Linux

/** CPU seconds per kind of thread (main, pool, v8, runtime), from /proc/self/task. */
function threadSeconds(): Record<string, number> {
  const out: Record<string, number> = {};
  const pid = String(process.pid);
  for (const tid of readdirSync('/proc/self/task', { withFileTypes: true })) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid.name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      // Deno names a Web Worker's thread worker-N (the pool's threads are such workers) and V8's
      // platform threads (concurrent GC, compilation, wasm tier-up) V8 DefaultWorker.
      const name = tid.name === pid ? 'main' : comm.startsWith('worker-') ? 'pool' : comm.startsWith('V8 ') ? 'v8' : 'runtime';
      out[name] = (out[name] ?? 0) + (Number(f[11]) + Number(f[12])) / TICKS;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

function procField(file: string, name: string): number {
  const line = readFileSync(`/proc/self/${file}`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(name));
  return Number(line?.split(/\s+/)[1] ?? 0);
}

const pool = await DecodePool.create({ threads: plan.threads });
async function pass(timed: boolean) {
  const data = videoLoader(plan.videos, {
    clip: { frames: plan.frames, stride: plan.stride },
    sampler: 'random',
    clipsPerVideo: plan.clipsPerVideo,
    seed: plan.seed,
    shuffle: false,
    size: plan.size,
    batchSize: plan.batch,
    to: 'cpu',
    pool,
    failureBudget: { maxFailures: 1_000_000 },
  });
  const cpu0 = processCpuSeconds();
  const threads0 = threadSeconds();
  const io0 = procField('io', 'rchar:');
  const t0 = performance.now();
  let clips = 0;
  let wrongTimes = 0;
  for await (const batch of data) {
    clips += batch.count;
    if (timed)
      batch.keys.forEach((key, i) => {
        const want = plan.times[key];
        const got = batch.frameTimes.subarray(i * plan.frames, (i + 1) * plan.frames);
        if (!want || want.some((t, k) => Math.abs(t - (got[k] ?? Number.NaN)) > 0.0015)) wrongTimes++;
      });
    batch.release();
  }
  const seconds = (performance.now() - t0) / 1000;
  // Where the time went, stage by stage: each stage's working slot time per clip (an async stage's
  // "working" is its task in flight: I/O waits included), and its median task.
  const stages = Object.fromEntries(
    (data.stats()?.stages ?? []).map((st) => [st.name, { msPerClip: st.timeMs.working / Math.max(1, clips), p50: st.taskMs.p50 }]),
  );
  const threads1 = threadSeconds();
  const threads = Object.fromEntries(Object.entries(threads1).map(([k, v]) => [k, v - (threads0[k] ?? 0)]));
  const out = {
    stages,
    threads,
    seconds,
    cpu: processCpuSeconds() - cpu0,
    readBytes: procField('io', 'rchar:') - io0,
    loaderBytes: data.reads().bytes,
    decodes: data.decodes(),
    clips,
    failures: data.failures().length,
    wrongTimes,
    firstError: data.failures()[0] ? `${data.failures()[0]?.key}: ${String(data.failures()[0]?.error)}` : null,
  };
  await data.close();
  return out;
}
await pass(false);
const timed = await pass(true);
await pool.close();
console.log(JSON.stringify({ ...timed, peakRssMb: procField('status', 'VmHWM:') / 1024 }));
