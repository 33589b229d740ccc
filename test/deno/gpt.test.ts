// Deno tier: a GPT training step against the CPU reference, and the tiny GPT learning the
// generated corpus to its bar (docs/gpt.md).
import './limits.ts';
import { acquireGpu } from '../../src/gpu/index.ts';
import { checkBar, gptCompletesAndRestores, gptLearnsCorpus, gptStepMatchesCpu } from '../shared/gpt-scenarios.ts';

Deno.test('a GPT training step on packed documents matches the CPU reference; complete, checkpoints, bad input', async () => {
  const gpu = await acquireGpu();
  try {
    const log = await gptStepMatchesCpu(gpu.device);
    if (log.length < 40) throw new Error(`only ${log.length} comparisons`);
    console.log(log.at(-1));
    await gptCompletesAndRestores(gpu.device);
  } finally {
    gpu.close();
  }
});

Deno.test('tiny GPT: learns the generated corpus to its bar', async () => {
  const gpu = await acquireGpu();
  try {
    const r = await gptLearnsCorpus(gpu.device, { steps: 250 });
    console.log(`[gpt] ${r.seconds.toFixed(1)} s: held-out loss ${r.loss.toFixed(3)}, accuracy ${r.accuracy.toFixed(3)}; "${r.sample}"`);
    checkBar(r);
  } finally {
    gpu.close();
  }
});
