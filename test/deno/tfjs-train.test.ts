// The full 288-step run with its accuracy bar is in the node-gpu tier; here the loop runs on
// TensorFlow.js's WebGPU backend on Tandem's device in Deno, watched for readbacks.
import './limits.ts';
import { aLossReadEachStepIsCounted, tfjsTrainsWithoutReadback } from '../shared/tfjs-training-scenarios.ts';

Deno.test('tfjs: 16 training steps from Tandem batches on the shared device, no readback of any kind', async () => {
  const r = await tfjsTrainsWithoutReadback();
  console.log(`tfjs training (Deno): ${r.steps} steps in ${r.seconds.toFixed(1)} s, ${r.readbacksWhileTraining} readbacks`);
});
Deno.test('tfjs: the same loop reading its loss each step is counted', async () => {
  await aLossReadEachStepIsCounted();
});
