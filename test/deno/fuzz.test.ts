// Deno tier: the decoder robustness bodies shared with Node and Chromium.
import './limits.ts';
import { withPool } from '../shared/decode-scenarios.ts';
import {
  closeWithQueuedJobs,
  damagedJpegDoesNotPoisonItsThread,
  forgedHeadersAreTooLarge,
  hangingVideosEnd,
  mutationalFuzzPass,
  timeLimitFailsTheItem,
} from '../shared/fuzz-scenarios.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';
import { FLOOD_CASES } from '../shared/flood-cases.ts';

const load: FixtureLoader = (name) => Deno.readFile(new URL(`../fixtures/generated/${name}`, import.meta.url));
const opts = { sanitizeOps: true, sanitizeResources: true };

Deno.test({
  name: 'videos that used to hang a thread end with a result or a typed error',
  ...opts,
  fn: () => withPool(2, (p) => hangingVideosEnd(p, load)).then(() => {}),
});
Deno.test({
  name: 'a job over its time limit fails alone as over-budget',
  ...opts,
  fn: () => withPool(2, (p) => timeLimitFailsTheItem(p, load)),
});
Deno.test({
  name: 'closing with jobs queued ends each as decoded, cancelled or closed',
  ...opts,
  fn: () => closeWithQueuedJobs('pthreads').then(() => {}),
});
Deno.test({ name: 'forged headers fail as too-large', ...opts, fn: () => withPool(1, (p) => forgedHeadersAreTooLarge(p, load)) });
Deno.test({
  name: "a damaged JPEG does not poison its thread's decoder",
  ...opts,
  fn: () => withPool(1, (p) => damagedJpegDoesNotPoisonItsThread(p)),
});
for (const flood of FLOOD_CASES) Deno.test({ name: flood.title, ...opts, fn: () => withPool(1, (p) => flood.run(p, load)) });
Deno.test({
  name: 'a seeded mutational fuzz pass over every fixture kind ends every case',
  ...opts,
  fn: () =>
    withPool(2, async (p) => {
      const summary = await mutationalFuzzPass(p, load, { seed: 0xde70, perSeed: 100 });
      console.log(`[fuzz] ${summary.cases} cases: ${JSON.stringify(summary.outcomes)}`);
    }),
});
