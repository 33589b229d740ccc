import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { checkBar, gptLearnsCorpus } from '../shared/gpt-scenarios.ts';

let gpu: GpuContext;
beforeAll(async () => {
  gpu = await acquireGpu();
});
afterAll(() => gpu?.close());

it('the tiny GPT learns the generated corpus to its bar (held-out next-character loss and accuracy)', async () => {
  const r = await gptLearnsCorpus(gpu.device, { steps: 250, report: (line) => console.log(line) });
  console.log(JSON.stringify(r));
  checkBar(r);
  expect(r.sample.startsWith('the cats ')).toBe(true);
}, 120_000);
