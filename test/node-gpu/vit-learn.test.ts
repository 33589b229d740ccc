import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { presets } from '../../src/vit/config.ts';
import { trainSynthetic } from '../shared/vit-scenarios.ts';

// The tiny preset on lavapipe: synthetic class templates under noise (made in the test) must be
// learnt; the same data with shuffled labels must not be (the learning is real, not leakage).
let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.close());

const STEPS = Number(process.env.VIT_LEARN_STEPS ?? 150);

it('tiny ViT learns separable synthetic data: loss falls, validation accuracy ≥ 90%', { timeout: 300_000 }, async () => {
  const r = await trainSynthetic(gpu.device, presets.tiny, STEPS, false);
  console.log(
    `real labels: losses ${r.losses.map((l) => l.toFixed(3)).join(' ')}; val accuracy ${r.valAccuracy}; ${r.imagesPerSecond.toFixed(0)} img/s over ${r.seconds.toFixed(1)} s`,
  );
  expect(r.losses[0]!).toBeGreaterThan(1.5);
  expect(r.losses.at(-1)!).toBeLessThan(0.5 * r.losses[0]!);
  expect(r.valAccuracy).toBeGreaterThanOrEqual(0.9);
});

it('with shuffled labels the validation accuracy stays near chance', { timeout: 300_000 }, async () => {
  const r = await trainSynthetic(gpu.device, presets.tiny, STEPS, true);
  console.log(`shuffled labels: losses ${r.losses.map((l) => l.toFixed(3)).join(' ')}; val accuracy ${r.valAccuracy}`);
  expect(r.valAccuracy).toBeLessThan(0.25);
});
