// dawn on lavapipe: `tandem train --generated` end to end, its usage errors, and trainText()
// resumed from a mid-run checkpoint, and stopped through its signal (test/shared/text-train-scenarios.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import {
  generatedTrainingReports,
  resumedTrainingEndsTheSame,
  stoppedTrainingEndsCleanly,
  usageErrorsNameTheFlag,
  outOfRangeIdsAreTypedFailures,
} from '../shared/text-train-scenarios.ts';

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

// Node's count of worker threads; a terminated worker lingers for a moment, so it is read once it
// has fallen to `atMost` (within 5 s).
const workers = () => process.getActiveResourcesInfo().filter((r) => r === 'Worker').length;
async function settledWorkers(atMost: number): Promise<number> {
  const until = Date.now() + 5000;
  while (workers() > atMost && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  return workers();
}

it(
  'trainText stopped through its signal (after a step, at an evaluation step, before the start, from timers) ends at once and leaves no tokenizer worker',
  () => stoppedTrainingEndsCleanly(gpu, settledWorkers),
  120_000,
);

it("trainText: an id the model has no row for fails its document by name; a loader vocabulary above the model's is refused before any GPU work", () =>
  outOfRangeIdsAreTypedFailures(gpu));
