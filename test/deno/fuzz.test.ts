// Deno tier: the decoder robustness bodies shared with Node and Chromium.
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
import { metadataFloodsDecodeLikeTheMedia } from '../shared/metadata-flood-scenarios.ts';
import { progressiveScanFloodFailsFast } from '../shared/jpeg-scan-flood-scenarios.ts';
import { sampleTableFloodsDecodeLikeTheMedia } from '../shared/sample-table-flood-scenarios.ts';

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
Deno.test({
  name: 'files flooded with metadata (FLAC comments, PNG tEXt, Matroska tags, chapters, cues and tracks) decode like the media alone',
  ...opts,
  fn: () => withPool(1, (p) => metadataFloodsDecodeLikeTheMedia(p, load)),
});
Deno.test({
  name: 'MP4 sample tables flooded (edits, chapter references, claimed samples) decode like the media alone',
  ...opts,
  fn: () => withPool(1, (p) => sampleTableFloodsDecodeLikeTheMedia(p, load)),
});
Deno.test({
  name: 'a progressive JPEG flooded with empty scans fails alone as corrupt past 500 scans, and decodes as before under it',
  ...opts,
  fn: () => withPool(1, (p) => progressiveScanFloodFailsFast(p, load)),
});
Deno.test({
  name: 'a seeded mutational fuzz pass over every fixture kind ends every case',
  ...opts,
  fn: () =>
    withPool(2, async (p) => {
      const summary = await mutationalFuzzPass(p, load, { seed: 0xde70, perSeed: 100 });
      console.log(`[fuzz] ${summary.cases} cases: ${JSON.stringify(summary.outcomes)}`);
    }),
});
