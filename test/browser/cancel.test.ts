import { expect, it } from 'vitest';
import { acquireGpu } from '../../src/gpu/index.ts';
import { checkStopLatency, loaderStopsAtRandomPoints, trainingStopsAtRandomPoints } from '../shared/cancel-scenarios.ts';

/**
 * Counts the page's live workers from outside the library: every Worker constructed (emscripten's
 * pthreads, the fallback's decode workers) until it is terminated, through a subclass installed
 * as the page's Worker for the test.
 */
function countWorkers(): { count: () => Promise<number>; made: () => number; restore: () => void } {
  const Original = globalThis.Worker;
  const live = new Set<Worker>();
  let made = 0;
  class CountedWorker extends Original {
    constructor(url: string | URL, options?: WorkerOptions) {
      super(url, options);
      live.add(this);
      made++;
    }
    override terminate(): void {
      live.delete(this);
      super.terminate();
    }
  }
  globalThis.Worker = CountedWorker;
  return { count: () => Promise.resolve(live.size), made: () => made, restore: () => void (globalThis.Worker = Original) };
}

it('50 stops of the loader at random points leave no job, batch buffer, GPU slot or thread held', async () => {
  const gpu = await acquireGpu();
  try {
    const r = await loaderStopsAtRandomPoints(50, 31, gpu.device);
    expect(r.poolsClosed).toBeGreaterThan(3);
  } finally {
    gpu.close();
  }
}, 300_000);

// The fallback a page without cross-origin isolation gets, stopped the same way; its workers
// counted by the page's Worker, none alive after every closed pool.
it('20 stops of the loader at random points with the workers-mode pool leave no job, batch buffer or worker held', async () => {
  const gpu = await acquireGpu();
  const workers = countWorkers();
  try {
    const r = await loaderStopsAtRandomPoints(20, 33, gpu.device, { mode: 'workers', countWorkers: workers.count });
    expect(r.poolsClosed).toBeGreaterThan(1);
    expect(workers.made()).toBeGreaterThanOrEqual(2 * (r.poolsClosed + 1)); // the count sees the pools' workers
  } finally {
    workers.restore();
    gpu.close();
  }
}, 300_000);

// 25 sessions here (about 3 s each in SwiftShader); Node and Deno run 200 of the same scenario.
it('25 training sessions aborted at random points, in every phase, each report nothing left held, and every worker they started is terminated', async () => {
  const gpu = await acquireGpu();
  const workers = countWorkers();
  try {
    const r = await trainingStopsAtRandomPoints(25, 32, gpu, 3000, workers.count, 0);
    const { counts, ...summary } = r;
    console.log(`training stops: ${JSON.stringify(summary)}; workers after each run: ${[...new Set(counts)].join(', ')}`);
    expect(r.cancelled).toBeGreaterThan(10);
    expect(r.byPhase['before-first-step']).toBeGreaterThan(0);
    expect(r.byPhase['mid-epoch']).toBeGreaterThan(0);
    expect(r.byPhase['held-out']).toBeGreaterThan(0);
    expect(r.unstopped).toBeGreaterThan(1);
    checkStopLatency(r.stopLatencyP95Ms, 'chromium');
    expect(workers.made()).toBeGreaterThanOrEqual(50); // the count sees the pools' workers: 2 per session
    expect(r.osThreads).toBe(0); // after the first two runs: none of their workers left alive, nor after any later run
  } finally {
    workers.restore();
    gpu.close();
  }
}, 300_000);
