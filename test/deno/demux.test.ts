// Deno tier of DecodePool.demuxVideo: the same scenarios as Node and Chromium, against ffprobe's packets.
import './limits.ts';
import { withPool } from '../shared/decode-scenarios.ts';
import { demuxScenarios, streamedDemuxScenarios, type FixtureLoader } from '../shared/demux-scenarios.ts';

const load: FixtureLoader = (name) => Deno.readFile(new URL(`../fixtures/generated/${name}`, import.meta.url));
const opts = { sanitizeOps: true, sanitizeResources: true };

for (const [title, body] of Object.entries({ ...demuxScenarios, ...streamedDemuxScenarios })) {
  Deno.test({ name: title, ...opts, fn: () => withPool(2, (p) => body(p, load)).then(() => {}) });
}
