// dawn on lavapipe: `tandem train --generated` end to end, its usage errors, and trainText()
// resumed from a mid-run checkpoint (test/shared/text-train-scenarios.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { generatedTrainingReports, resumedTrainingEndsTheSame, usageErrorsNameTheFlag } from '../shared/text-train-scenarios.ts';

let dir: string;
let gpu: GpuContext;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tandem-text-train-'));
  gpu = await acquireGpu();
});
afterAll(async () => {
  gpu?.close();
  await rm(dir, { recursive: true, force: true });
});

it('tandem train --generated: loss falls, held-out report, padding, bottleneck, a continuation in the corpus alphabet', async () => {
  await generatedTrainingReports(dir);
}, 60_000);

it('tandem train --text: bad flags are usage errors naming the flag', () => usageErrorsNameTheFlag(dir));

it(
  'trainText resumed from its step-12 checkpoint ends with the bytes of a run that never stopped',
  () => resumedTrainingEndsTheSame(gpu),
  60_000,
);
