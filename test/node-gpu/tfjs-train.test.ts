import { it } from 'vitest';
import { tfjsTrainsFromTandemBatches } from '../shared/tfjs-training-scenarios.ts';

it('probe', { timeout: 600_000 }, async () => {
  for (const epochs of [2, 4, 6]) console.log(epochs, await tfjsTrainsFromTandemBatches(512, 128, epochs));
});
