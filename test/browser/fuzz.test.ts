import { describe, it } from 'vitest';
import { withPool } from '../shared/decode-scenarios.ts';
import {
  damagedJpegDoesNotPoisonItsThread,
  forgedHeadersAreTooLarge,
  hangingVideosEnd,
  mutationalFuzzPass,
  timeLimitFailsTheItem,
} from '../shared/fuzz-scenarios.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';
import { FLOOD_CASES } from '../shared/flood-cases.ts';

// Served by the vite dev server from test/fixtures (generated/ is made by scripts/make-fixtures.sh).
const load: FixtureLoader = async (name) => {
  const response = await fetch(`/test/fixtures/generated/${name}`);
  if (!response.ok) throw new Error(`fixture ${name}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
};

describe('decoder robustness (Chromium)', () => {
  it('videos that used to hang a thread end with a result or a typed error', () => withPool(2, (p) => hangingVideosEnd(p, load)), 120_000);
  it('a job over its time limit fails alone as over-budget', () => withPool(2, (p) => timeLimitFailsTheItem(p, load)), 60_000);
  it('forged headers fail as too-large', () => withPool(1, (p) => forgedHeadersAreTooLarge(p, load)));
  it("a damaged JPEG does not poison its thread's decoder", () => withPool(1, (p) => damagedJpegDoesNotPoisonItsThread(p)));
  for (const flood of FLOOD_CASES) it(flood.title, () => withPool(1, (p) => flood.run(p, load)), 60_000);
  it(
    'a seeded mutational fuzz pass over every fixture kind ends every case',
    () => withPool(2, (p) => mutationalFuzzPass(p, load, { seed: 0xc405, perSeed: 40 })),
    300_000,
  );
});
