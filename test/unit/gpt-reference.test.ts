import { describe, expect, it } from 'vitest';
import { OptionError } from '../../src/errors/index.ts';
import { type GptConfig, gptDims, gptParamLayout, gptPresets, initGptParams } from '../../src/gpt/config.ts';
import { ReferenceGpt } from '../../src/gpt/reference.ts';
import { CORPUS_VOCAB_SIZE } from '../../src/synthetic/index.ts';

const small: GptConfig = { vocabSize: 7, context: 5, width: 8, depth: 2, heads: 2, mlpRatio: 2 };
const B = 2;
// Row 0: two documents; row 1: one document, then padding (docId −1, label −1).
const batch = {
  inputs: [0, 3, 4, 0, 6, /**/ 2, 5, 1, 0, 0],
  labels: [3, 4, -1, 6, 2, /**/ 5, 1, -1, -1, -1],
  docIds: [0, 0, 0, 1, 1, /**/ 0, 0, 0, -1, -1],
  positions: [0, 1, 2, 0, 1, /**/ 0, 1, 2, 0, 0],
};

describe('CPU reference GPT', () => {
  it('hand-written gradients match central finite differences for every parameter tensor (f64)', () => {
    const model = new ReferenceGpt(small);
    const params = Float64Array.from(initGptParams(small, 3, 0.5), (v, i) => v + (i % 7 === 0 ? 0.1 : 0));
    const grads = model.backward(params, model.forward(params, batch, B), B);
    const h = 1e-6;
    for (const t of model.layout.tensors) {
      let worst = 0;
      let scale = 0;
      for (let i = t.offset; i < t.offset + t.size; i++) {
        const keep = params[i] ?? 0;
        params[i] = keep + h;
        const up = model.forward(params, batch, B).loss;
        params[i] = keep - h;
        const down = model.forward(params, batch, B).loss;
        params[i] = keep;
        const fd = (up - down) / (2 * h);
        worst = Math.max(worst, Math.abs(fd - (grads[i] ?? 0)));
        scale = Math.max(scale, Math.abs(fd));
      }
      expect(scale, `${t.name} has a non-zero gradient`).toBeGreaterThan(1e-6);
      expect(worst / scale, `${t.name}: max |analytic - numeric| / max |numeric|`).toBeLessThan(1e-6);
    }
  });

  it('a document never sees another: changing one document leaves the other logits unchanged', () => {
    const model = new ReferenceGpt(small);
    const params = Float64Array.from(initGptParams(small, 4, 0.5));
    const before = model.forward(params, batch, B).logits;
    const after = model.forward(params, { ...batch, inputs: [0, 3, 4, 0, 2, /**/ 2, 5, 1, 0, 0] }, B).logits;
    const V = small.vocabSize;
    for (let r = 0; r < B * small.context; r++) {
      const row = (l: Float64Array) => Array.from(l.subarray(r * V, (r + 1) * V));
      if (r === 4) expect(row(after)).not.toEqual(row(before));
      else expect(row(after), `position ${r}`).toEqual(row(before));
    }
  });

  it('the loss is the mean over labelled positions only', () => {
    const model = new ReferenceGpt(small);
    const fwd = model.forward(Float64Array.from(initGptParams(small, 5)), batch, B);
    expect(fwd.count).toBe(6);
    let sum = 0;
    for (let r = 0; r < B * small.context; r++) {
      const y = batch.labels[r] ?? -1;
      if (y < 0) continue;
      const row = fwd.logits.subarray(r * small.vocabSize, (r + 1) * small.vocabSize);
      const max = Math.max(...row);
      sum += Math.log(row.reduce((s, v) => s + Math.exp(v - max), 0)) + max - (row[y] ?? 0);
    }
    expect(fwd.loss).toBeCloseTo(sum / 6, 12);
  });
});

describe('GPT config', () => {
  it('lays tensors out at 256-byte offsets, decayed matrices first', () => {
    const layout = gptParamLayout(gptPresets.tiny);
    expect(gptPresets.tiny.vocabSize).toBe(CORPUS_VOCAB_SIZE);
    for (const t of layout.tensors) expect(t.offset % 64).toBe(0);
    expect(layout.tensors.filter((t) => t.decay).every((t) => t.offset < layout.decayEnd)).toBe(true);
    expect(layout.tensors.filter((t) => !t.decay).every((t) => t.offset >= layout.decayEnd)).toBe(true);
    expect(layout.tensors.reduce((n, t) => n + t.size, 0)).toBe(72704);
  });

  it('rejects a bad config with an OptionError naming the field', () => {
    expect(() => gptDims({ ...small, heads: 3 })).toThrow(OptionError);
    expect(() => gptDims({ ...small, heads: 3 })).toThrow(/heads/);
    expect(() => gptDims({ ...small, vocabSize: 1 })).toThrow(/vocabSize/);
    expect(() => gptDims({ ...small, context: 0.5 })).toThrow(/context/);
  });
});
