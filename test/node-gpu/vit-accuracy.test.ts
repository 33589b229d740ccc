import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { learnGeneratedDataset } from '../shared/vit-dataset-learning.ts';

// The accuracy bar of the tiny preset on the project's generated dataset (16384 JPEGs of 500×375,
// four shape classes, every 5th held out), within a fixed budget of 6000 steps of 32 on lavapipe.
// The slowest test of the suite: ~23 min in Node on 2 cores, plus ~7 min on a fresh machine to generate
// the images (cached under ~/.cache/tandem/datasets afterwards). bench/vit-learn.ts draws the
// same run's whole curve (docs/vit-learn.md).
let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.close());

it('the tiny preset reaches ≥ 90% held-out accuracy on 16384 generated images within 6000 steps', { timeout: 3_600_000 }, async () => {
  const result = await learnGeneratedDataset(gpu.device, {
    images: 16_384,
    steps: 6000,
    evalEvery: 1500,
    onRow: (r) =>
      process.stdout.write(
        `step ${r.step} (${r.seconds.toFixed(0)} s): train ${(100 * r.trainAccuracy).toFixed(1)}%, held-out ${(100 * r.heldAccuracy).toFixed(1)}%\n`,
      ),
  });
  expect(result.held).toBe(3276);
  const last = result.rows.at(-1)!;
  expect(last.step).toBe(6000);
  expect(last.heldAccuracy).toBeGreaterThanOrEqual(0.9);
});
