// The decoder robustness scenarios by title: every runtime registers them from these two lists,
// so no tier's copy can drift. Those about the pool's own behaviour (hangs, limits, aborts, close,
// a poisoned thread) run per pool mode; those about hostile inputs run on a pthreads pool.
import type { DecodeMode } from '../../src/decode/index.ts';
import { withPool } from './decode-scenarios.ts';
import { FLOOD_CASES } from './flood-cases.ts';
import {
  abortWhileWaitingForASlot,
  closeWithQueuedJobs,
  damagedJpegDoesNotPoisonItsThread,
  forgedHeadersAreTooLarge,
  hangingVideosEnd,
  hangingVideosFailAloneOnOneThread,
  mutationalFuzzPass,
  timeLimitFailsTheItem,
} from './fuzz-scenarios.ts';
import type { FixtureLoader } from './media-scenarios.ts';

type Scenarios = Record<string, () => Promise<void>>;

/** The pool's behaviour under bad input, for a pool of `mode`. */
export function poolRobustness(load: FixtureLoader, mode: DecodeMode): Scenarios {
  return {
    'videos that used to hang a thread end with a result or a typed error': async () => {
      await withPool(2, (p) => hangingVideosEnd(p, load), mode);
    },
    'videos that used to hang fail alone and fast on a one-thread pool, which then decodes as before': async () => {
      console.log(
        `[hang] ${mode}, one thread: ${JSON.stringify(await withPool(1, (p) => hangingVideosFailAloneOnOneThread(p, load), mode))}`,
      );
    },
    'a job over its time limit fails alone as over-budget': () => withPool(2, (p) => timeLimitFailsTheItem(p, load), mode),
    'a request waiting for a job record gives up on abort': () => abortWhileWaitingForASlot(mode),
    'closing with jobs queued ends each as decoded, cancelled or closed': async () => {
      console.log(`[close] ${mode}: ${JSON.stringify(await closeWithQueuedJobs(mode))}`);
    },
    "a damaged JPEG does not poison its thread's decoder for the next ones": () =>
      withPool(1, (p) => damagedJpegDoesNotPoisonItsThread(p), mode),
  };
}

/** Hostile inputs: forged sizes, floods of metadata and tables, and a seeded mutational pass of `perSeed` cases per fixture kind. */
export function inputRobustness(load: FixtureLoader, fuzz: { seed: number; perSeed: number }): Scenarios {
  return {
    'forged headers (absurd WAV rates and channel counts, video over its limits) fail as too-large': () =>
      withPool(1, (p) => forgedHeadersAreTooLarge(p, load)),
    ...Object.fromEntries(FLOOD_CASES.map((flood) => [flood.title, () => withPool(1, (p) => flood.run(p, load))])),
    'a seeded mutational fuzz pass over every fixture kind ends every case': async () => {
      const summary = await withPool(2, (p) => mutationalFuzzPass(p, load, fuzz));
      console.log(`[fuzz] ${summary.cases} cases: ${JSON.stringify(summary.outcomes)}`);
    },
  };
}
