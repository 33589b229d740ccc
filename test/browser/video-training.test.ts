// A clip classifier trains in Chromium from videoLoader() on the generated moving-shapes videos
// (scripts/make-fixtures.sh): WebCodecs decode into GPU batches, tf.js on the same device, no
// readback while training, held-out accuracy over the bar.
import { expect, it } from 'vitest';
import { movingShapesUrls, VIDEO_ACCURACY_BAR, videoClassifierLearnsMotion } from '../shared/video-training-scenarios.ts';

const root = '/test/fixtures/generated';

it(`a tf.js clip classifier learns the direction of motion from the WebCodecs road to ≥ ${100 * VIDEO_ACCURACY_BAR}% held out, with no readback`, async () => {
  const r = await videoClassifierLearnsMotion(
    movingShapesUrls(`${root}/moving-shapes`, 1, 96),
    movingShapesUrls(`${root}/moving-shapes-test`, 2, 48),
    2,
    'webcodecs',
  );
  console.log(
    `video classifier: ${(100 * r.heldAccuracy).toFixed(1)}% held out after ${r.steps} steps in ${r.seconds.toFixed(1)} s; roads ${JSON.stringify(r.roads)}`,
  );
  expect(r.roads.wasm).toBe(0);
}, 300_000);
