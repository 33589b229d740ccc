import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { checkStopLatency, loaderStopsAtRandomPoints, trainingStopsAtRandomPoints } from '../shared/cancel-scenarios.ts';

// Node's own account of what keeps the process alive, for the kinds Tandem could leave behind:
// worker threads and their ports, timers. Terminated workers' ports linger for a moment, so the
// count is taken once it has settled (within 5 s).
const KINDS = ['Worker', 'MessagePort', 'Timeout', 'Immediate'];
const leftover = () => process.getActiveResourcesInfo().filter((r) => KINDS.includes(r)).length;
async function settledLeftover(atMost: number): Promise<number> {
  const until = Date.now() + 5000;
  while (leftover() > atMost && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  return leftover();
}

let gpu: GpuContext;
let before: number;
beforeAll(async () => {
  gpu = await acquireGpu();
  before = await settledLeftover(0);
});
afterAll(() => gpu.close());

it('200 stops of the loader at random points leave no job, batch buffer, GPU slot or thread held', async () => {
  const r = await loaderStopsAtRandomPoints(200, 11, gpu.device);
  expect(r.stops).toBe(200);
  expect(Object.values(r.byKind).every((n) => n > 20)).toBe(true);
  expect(r.poolsClosed).toBeGreaterThan(20);
  expect(await settledLeftover(before)).toBeLessThanOrEqual(before);
}, 300_000);

it('60 stops of the loader at random points with the workers-mode pool leave no job, batch buffer or worker held', async () => {
  const r = await loaderStopsAtRandomPoints(60, 13, gpu.device, { mode: 'workers' });
  expect(r.stops).toBe(60);
  expect(Object.values(r.byKind).every((n) => n > 5)).toBe(true);
  expect(r.poolsClosed).toBeGreaterThan(5);
  expect(await settledLeftover(before)).toBeLessThanOrEqual(before);
}, 300_000);

it('200 training sessions aborted at random points, in every phase, each report nothing left held', async () => {
  const r = await trainingStopsAtRandomPoints(200, 12, gpu, 700);
  const { counts, ...summary } = r;
  console.log(`training stops: ${JSON.stringify(summary)}; threads after each run: ${[...new Set(counts)].join(', ')}`);
  expect(r.cancelled).toBeGreaterThan(100);
  expect(r.unstopped).toBeGreaterThan(10);
  expect(r.byPhase['before-first-step']).toBeGreaterThan(0);
  expect(r.byPhase['mid-epoch']).toBeGreaterThan(0);
  expect(r.byPhase['held-out']).toBeGreaterThan(0);
  checkStopLatency(r.stopLatencyP95Ms, 'node');
  // Counted from /proc: every later run came back to the first two runs' settled count, exactly.
  expect(r.osThreads).toBeGreaterThan(0);
  expect(await settledLeftover(before)).toBeLessThanOrEqual(before);
}, 600_000);
