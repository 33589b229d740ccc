import { describe, expect, it } from 'vitest';
import { initParams, learningRate, paramLayout, rng, type TrainConfig, type ViTConfig } from '../../src/vit/config.ts';
import { adamwStep, clipScale, ReferenceViT } from '../../src/vit/reference.ts';

const small: ViTConfig = { imageSize: 8, patchSize: 4, channels: 2, width: 8, depth: 2, heads: 2, mlpRatio: 2, classes: 3 };
const B = 2;

function setup() {
  const model = new ReferenceViT(small);
  const next = rng(7);
  // Large random values everywhere (norm gains and biases too) so no gradient is trivially zero.
  const params = Float64Array.from(initParams(small, 3, 0.5), (v, i) => v + (i % 5 === 0 ? 0.3 * (next() - 0.5) : 0));
  const images = Float64Array.from({ length: B * small.channels * small.imageSize ** 2 }, () => next() * 2 - 1);
  const labels = [2, 0];
  return { model, params, images, labels };
}

describe('CPU reference ViT', () => {
  it('hand-written gradients match central finite differences for every parameter tensor (f64)', () => {
    const { model, params, images, labels } = setup();
    const grads = model.backward(params, model.forward(params, images, labels, B), B);
    const h = 1e-6;
    for (const t of model.layout.tensors) {
      let worst = 0;
      let scale = 0;
      for (let i = t.offset; i < t.offset + t.size; i++) {
        const keep = params[i]!;
        params[i] = keep + h;
        const up = model.forward(params, images, labels, B).loss;
        params[i] = keep - h;
        const down = model.forward(params, images, labels, B).loss;
        params[i] = keep;
        const fd = (up - down) / (2 * h);
        worst = Math.max(worst, Math.abs(fd - grads[i]!));
        scale = Math.max(scale, Math.abs(fd));
      }
      expect(scale, `${t.name} has a non-zero gradient`).toBeGreaterThan(1e-6);
      expect(worst / scale, `${t.name}: max |analytic - numeric| / max |numeric|`).toBeLessThan(1e-6);
    }
  });

  it('padding labels (< 0) contribute neither loss nor gradient', () => {
    const { model, params, images } = setup();
    const fwd = model.forward(params, images, [1, -1], B);
    expect(Number.isFinite(fwd.loss)).toBe(true);
    expect(fwd.cache.dlogits.subarray(3, 6).every((v) => v === 0)).toBe(true);
  });

  it('warmup + cosine schedule, clipping and AdamW follow their definitions', () => {
    const t: TrainConfig = {
      lr: 1,
      minLr: 0.1,
      warmupSteps: 10,
      totalSteps: 110,
      beta1: 0.9,
      beta2: 0.99,
      eps: 1e-8,
      weightDecay: 0.1,
      clipNorm: 1,
    };
    expect(learningRate(t, 5)).toBeCloseTo(0.5, 12);
    expect(learningRate(t, 10)).toBeCloseTo(1, 12);
    expect(learningRate(t, 60)).toBeCloseTo(0.55, 12);
    expect(learningRate(t, 110)).toBeCloseTo(0.1, 12);
    expect(learningRate(t, 500)).toBeCloseTo(0.1, 12);
    expect(clipScale([3, 4], 1).norm).toBeCloseTo(5, 12);
    expect(clipScale([3, 4], 1).scale).toBeCloseTo(0.2, 6);
    expect(clipScale([0.3, 0.4], 1).scale).toBe(1);
    // First step: m̂ = g·s, v̂ = (g·s)², so the update is lr·(sign(g) + wd·p) on decayed elements.
    const p = Float64Array.of(2, 2);
    const state = { m: new Float64Array(2), v: new Float64Array(2), step: 0 };
    const lr = adamwStep(p, [3, -4], state, t, 1);
    expect(lr).toBeCloseTo(0.1, 12);
    expect(p[0]).toBeCloseTo(2 - 0.1 * (1 + 0.1 * 2), 6);
    expect(p[1]).toBeCloseTo(2 + 0.1, 6);
    expect(state.m[0]).toBeCloseTo(0.1 * 0.6, 6);
    expect(state.v[1]).toBeCloseTo(0.01 * 0.64, 6);
  });

  it('parameter layout: decayed matrices first, 64-element aligned; init is deterministic', () => {
    const layout = paramLayout(small);
    for (const t of layout.tensors) {
      expect(t.offset % 64).toBe(0);
      expect(t.decay).toBe(t.offset < layout.decayEnd);
    }
    expect(initParams(small, 5)).toEqual(initParams(small, 5));
    expect(initParams(small, 5)).not.toEqual(initParams(small, 6));
  });
});
