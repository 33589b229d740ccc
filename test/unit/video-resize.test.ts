// Video frames through resize.c (as JPEG images) and the stream's colour tags (Node, wasm pool).
// Fixtures from scripts/make-fixtures.sh.
import { describe, it } from 'vitest';
import { loadFixture as load } from '../shared/node-fixtures.ts';
import { usePool } from '../shared/use-pool.ts';
import {
  bt709ClipMatchesFfmpegCli,
  colourTagNames,
  demuxReportsColourTags,
  otherFiltersKeepSwscale,
  reducedVideoDecodesEqualResizeOfOwnSize,
} from '../shared/video-resize-scenarios.ts';

describe('video resize and colour tags (Node)', () => {
  const pool = usePool({ threads: 2, maxInFlight: 4 });

  it("a reduced decode is resize.c's filter on the own-size frame, byte for byte", () =>
    reducedVideoDecodesEqualResizeOfOwnSize(pool(), load));
  it('other filters keep libswscale', () => otherFiltersKeepSwscale(pool(), load));
  it("a BT.709-tagged clip matches ffmpeg's CLI", async () => {
    console.log(`[ffmpeg cli] ${await bt709ClipMatchesFfmpegCli(pool(), load)}`);
  });
  it('the demux job reports the colour tags', () => demuxReportsColourTags(pool(), load));
  it("colour tags in WebCodecs' names", () => colourTagNames());
});
