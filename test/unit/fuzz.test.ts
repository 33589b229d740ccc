import { readFile } from 'node:fs/promises';
import { describe, it } from 'vitest';
import { withPool } from '../shared/decode-scenarios.ts';
import {
  abortWhileWaitingForASlot,
  closeWithQueuedJobs,
  damagedJpegDoesNotPoisonItsThread,
  forgedHeadersAreTooLarge,
  hangingVideosEnd,
  mutationalFuzzPass,
  timeLimitFailsTheItem,
} from '../shared/fuzz-scenarios.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';
import { FLOOD_CASES } from '../shared/flood-cases.ts';

const load: FixtureLoader = async (name) => new Uint8Array(await readFile(new URL(`../fixtures/generated/${name}`, import.meta.url)));

describe('decoder robustness (Node)', () => {
  for (const mode of ['pthreads', 'workers'] as const) {
    it(
      `videos that used to hang a thread end with a result or a typed error (${mode})`,
      () => withPool(2, (p) => hangingVideosEnd(p, load), mode),
      120_000,
    );
    it(
      `a job over its time limit fails alone as over-budget (${mode})`,
      () => withPool(2, (p) => timeLimitFailsTheItem(p, load), mode),
      60_000,
    );
    it(`a request waiting for a job record gives up on abort (${mode})`, () => abortWhileWaitingForASlot(mode));
    it(`closing with jobs queued ends each as decoded, cancelled or closed (${mode})`, async () => {
      console.log(`[close] ${mode}: ${JSON.stringify(await closeWithQueuedJobs(mode))}`);
    });
  }
  for (const mode of ['pthreads', 'workers'] as const) {
    it(`a damaged JPEG does not poison its thread's decoder for the next ones (${mode})`, () =>
      withPool(1, (p) => damagedJpegDoesNotPoisonItsThread(p), mode));
  }
  it('forged headers (absurd WAV rates and channel counts, video over its limits) fail as too-large', () =>
    withPool(1, (p) => forgedHeadersAreTooLarge(p, load)));
  for (const flood of FLOOD_CASES) it(flood.title, () => withPool(1, (p) => flood.run(p, load)), 60_000);
  it(
    'a seeded mutational fuzz pass over every fixture kind ends every case',
    () =>
      withPool(2, async (pool) => {
        const summary = await mutationalFuzzPass(pool, load, { seed: 0x5eed, perSeed: 200 });
        console.log(`[fuzz] ${summary.cases} cases: ${JSON.stringify(summary.outcomes)}`);
      }),
    300_000,
  );
});
