// The 288-step run with its accuracy bar is in the node-gpu tier (lavapipe runs it in about 40 s,
// SwiftShader took about 270 s); here the loop runs on TensorFlow.js's WebGPU backend on Tandem's
// device in Chromium, watched for readbacks.
import { it } from 'vitest';
import { aLossReadEachStepIsCounted, tfjsTrainsWithoutReadback } from '../shared/tfjs-training-scenarios.ts';

it('tfjs: 16 training steps from Tandem batches on the shared device, no readback of any kind', { timeout: 180_000 }, async () => {
  const r = await tfjsTrainsWithoutReadback();
  console.log(`tfjs training (Chromium): ${r.steps} steps in ${r.seconds.toFixed(1)} s, ${r.readbacksWhileTraining} readbacks`);
});
it('tfjs: the same loop reading its loss each step is counted', { timeout: 120_000 }, async () => {
  await aLossReadEachStepIsCounted();
});
