// Deno tier: video frames through resize.c and the stream's colour tags, the same bodies as Node.
import './limits.ts';
import { withPool } from '../shared/decode-scenarios.ts';
import { denoFixture, SANITIZED } from '../shared/deno-serve.ts';
import { allVideoResizeChecks } from '../shared/video-resize-scenarios.ts';

for (const mode of ['pthreads', 'workers'] as const) {
  Deno.test({
    name: `video (${mode}): a reduced decode is resize.c's filter on the own-size frame; other filters keep swscale; BT.709 tags honoured and reported`,
    ...SANITIZED,
    fn: () => withPool(2, (p) => allVideoResizeChecks(p, denoFixture), mode),
  });
}
