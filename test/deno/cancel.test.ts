// Deno's test sanitizers (on by default) also fail these tests if a timer, an async operation or
// a resource outlives them.
import './limits.ts';
import { acquireGpu } from '../../src/gpu/index.ts';
import { checkStopLatency, denoWorkerThreads, loaderStopsAtRandomPoints, trainingStopsAtRandomPoints } from '../shared/cancel-scenarios.ts';

Deno.test('200 stops of the loader at random points leave no job, batch buffer, GPU slot or thread held', async () => {
  const gpu = await acquireGpu();
  try {
    const r = await loaderStopsAtRandomPoints(200, 21, gpu.device);
    if (r.poolsClosed < 20 || Object.values(r.byKind).some((n) => n < 20)) throw new Error(JSON.stringify(r));
  } finally {
    gpu.close();
  }
});

Deno.test('60 stops of the loader at random points with the workers-mode pool leave no job, batch buffer or worker held', async () => {
  const gpu = await acquireGpu();
  try {
    // The workers are counted from the OS too (their threads, by name), back to none after every closed pool.
    if ((await denoWorkerThreads()) === undefined) throw new Error('/proc/self/task is not readable: cannot count the workers');
    const r = await loaderStopsAtRandomPoints(60, 23, gpu.device, { mode: 'workers', countWorkers: denoWorkerThreads });
    if (r.poolsClosed < 5 || Object.values(r.byKind).some((n) => n < 5)) throw new Error(JSON.stringify(r));
  } finally {
    gpu.close();
  }
});

Deno.test('200 training sessions aborted at random points, in every phase, each report nothing left held', async () => {
  const gpu = await acquireGpu();
  try {
    // Counted from the OS: Deno's worker threads by name (the whole process's count moves with its
    // blocking pool), so every run must end with none alive.
    const r = await trainingStopsAtRandomPoints(200, 22, gpu, 800, denoWorkerThreads, 0);
    const { counts, ...summary } = r;
    console.log(`training stops: ${JSON.stringify(summary)}; worker threads after each run: ${[...new Set(counts)].join(', ')}`);
    const phasesHit = r.byPhase['before-first-step'] > 0 && r.byPhase['mid-epoch'] > 0 && r.byPhase['held-out'] > 0;
    if (r.cancelled < 100 || r.unstopped < 10 || !phasesHit || r.osThreads !== 0) throw new Error(JSON.stringify(summary));
    checkStopLatency(r.stopLatencyP95Ms, 'deno');
  } finally {
    gpu.close();
  }
});
