import { it } from 'vitest';
import { aLossReadEachStepIsCounted, tfjsModelLearnsShapes } from '../shared/tfjs-training-scenarios.ts';

it('tfjs: a convolutional net trains from Tandem batches on the shared device, no readback, ≥ 45% held-out on 4 shapes', {
  timeout: 600_000,
}, async () => {
  const r = await tfjsModelLearnsShapes();
  console.log(
    `tfjs training: ${r.steps} steps in ${r.seconds.toFixed(1)} s, held-out ${(100 * r.heldAccuracy).toFixed(1)}%, ${r.readbacksWhileTraining} readbacks`,
  );
});
it('tfjs: the same loop reading its loss each step is counted', { timeout: 120_000 }, async () => {
  await aLossReadEachStepIsCounted();
});
