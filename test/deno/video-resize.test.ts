// Deno tier: video frames through resize.c and the stream's colour tags, the same bodies as Node.
import './limits.ts';
import { withPool } from '../shared/decode-scenarios.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';
import {
  bt709ClipMatchesFfmpegCli,
  colourTagNames,
  demuxReportsColourTags,
  otherFiltersKeepSwscale,
  reducedVideoDecodesEqualResizeOfOwnSize,
} from '../shared/video-resize-scenarios.ts';

const load: FixtureLoader = (name) => Deno.readFile(new URL(`../fixtures/generated/${name}`, import.meta.url));
const opts = { sanitizeOps: true, sanitizeResources: true };

for (const mode of ['pthreads', 'workers'] as const) {
  Deno.test({
    name: `video (${mode}): a reduced decode is resize.c's filter on the own-size frame; other filters keep swscale; BT.709 tags honoured and reported`,
    ...opts,
    fn: () =>
      withPool(
        2,
        async (p) => {
          await reducedVideoDecodesEqualResizeOfOwnSize(p, load);
          await otherFiltersKeepSwscale(p, load);
          await bt709ClipMatchesFfmpegCli(p, load);
          await demuxReportsColourTags(p, load);
          colourTagNames();
        },
        mode,
      ),
  });
}
