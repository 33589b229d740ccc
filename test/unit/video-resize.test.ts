// Video frames through resize.c (as JPEG images) and the stream's colour tags (Node, wasm pool).
// Fixtures from scripts/make-fixtures.sh.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';
import {
  bt709ClipMatchesFfmpegCli,
  colourTagNames,
  demuxReportsColourTags,
  otherFiltersKeepSwscale,
  reducedVideoDecodesEqualResizeOfOwnSize,
} from '../shared/video-resize-scenarios.ts';

const load: FixtureLoader = async (name) => new Uint8Array(await readFile(new URL(`../fixtures/generated/${name}`, import.meta.url)));

describe('video resize and colour tags (Node)', () => {
  let pool: DecodePool;
  beforeAll(async () => {
    pool = await DecodePool.create({ threads: 2, maxInFlight: 4 });
  });
  afterAll(async () => {
    await pool.close();
  });

  it("a reduced decode is resize.c's filter on the own-size frame, byte for byte", () =>
    reducedVideoDecodesEqualResizeOfOwnSize(pool, load));
  it('other filters keep libswscale', () => otherFiltersKeepSwscale(pool, load));
  it("a BT.709-tagged clip matches ffmpeg's CLI", async () => {
    console.log(`[ffmpeg cli] ${await bt709ClipMatchesFfmpegCli(pool, load)}`);
  });
  it('the demux job reports the colour tags', () => demuxReportsColourTags(pool, load));
  it("colour tags in WebCodecs' names", () => colourTagNames());
});
