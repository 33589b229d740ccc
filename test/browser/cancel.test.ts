import { expect, it } from 'vitest';
import { acquireGpu } from '../../src/gpu/index.ts';
import { loaderStopsAtRandomPoints, trainingStopsAtRandomPoints } from '../shared/cancel-scenarios.ts';

it('50 stops of the loader at random points leave no job, batch buffer, GPU slot or thread held', async () => {
  const gpu = await acquireGpu();
  try {
    const r = await loaderStopsAtRandomPoints(50, 31, gpu.device);
    expect(r.poolsClosed).toBeGreaterThan(3);
  } finally {
    gpu.close();
  }
}, 300_000);

it('50 training sessions aborted at random points each report nothing left held', async () => {
  const gpu = await acquireGpu();
  try {
    const r = await trainingStopsAtRandomPoints(50, 32, gpu, 3000);
    console.log(`training stops: ${JSON.stringify(r)}`);
    expect(r.cancelled).toBeGreaterThan(20);
    expect(r.unstopped).toBeGreaterThan(2);
  } finally {
    gpu.close();
  }
}, 300_000);
