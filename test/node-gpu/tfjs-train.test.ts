// The full 288-step run with its accuracy bar runs here, on lavapipe, where it costs about 40 s:
// in Chromium (SwiftShader) the same GPU work took about 270 s. The browser and Deno tiers run the
// 16-step loop watched for readbacks.
import { it } from 'vitest';
import { aLossReadEachStepIsCounted, tfjsModelLearnsShapes } from '../shared/tfjs-training-scenarios.ts';

it('tfjs: a convolutional net trains from Tandem batches on the shared device, no readback, ≥ 45% held-out on 4 shapes', {
  timeout: 300_000,
}, async () => {
  const r = await tfjsModelLearnsShapes();
  console.log(
    `tfjs training (Node): ${r.steps} steps in ${r.seconds.toFixed(1)} s, held-out ${(100 * r.heldAccuracy).toFixed(1)}%, ${r.readbacksWhileTraining} readbacks`,
  );
});
it('tfjs: the same loop reading its loss each step is counted', { timeout: 120_000 }, async () => {
  await aLossReadEachStepIsCounted();
});
