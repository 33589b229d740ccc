// Node tier: videoLoader() to CPU clips on a pthreads pool (test/shared/video-loader-scenarios.ts).
import { join } from 'node:path';
import { describe, it, expect } from 'vitest';
import { serveOnNode } from '../shared/node-serve.ts';
import { rangeHandler } from '../shared/stream-scenarios.ts';
import { loadFixture as load } from '../shared/node-fixtures.ts';
import { usePool } from '../shared/use-pool.ts';
import {
  brokenVideosFailTheirOwnItem,
  clipCropsAreSeeded,
  cpuClipsFollowTheSampler,
  indexesKeptForLaterEpochs,
  longVideoReadsItsGops,
  mutatedVideosFailTyped,
  parquetVideosAreTheListsClips,
  sharedDecodesGiveEachClipItsFrames,
  vfrClipsFollowTime,
} from '../shared/video-loader-scenarios.ts';

describe('videoLoader (Node, CPU clips)', () => {
  const pool = usePool({ threads: 2 });
  it('hands out the clips the sampler draws: frame times, labels, keys, batch shape', () => cpuClipsFollowTheSampler(pool(), load));
  it('random-crop: one crop box and flip per clip from (seed, epoch, key, clip)', () => clipCropsAreSeeded(pool(), load));
  it("random clips are the sampler's draws for (seed, epoch, key)", () => cpuClipsFollowTheSampler(pool(), load, 'random'));
  it("clips that share frames share one decode, each clip's pixels and times those of its decode alone; a stopped pass frees what it shared", () =>
    sharedDecodesGiveEachClipItsFrames(pool(), load));
  it('a cut, random, audio-only or empty file fails its own item in the sample stage with a typed error; nothing is lost', () =>
    brokenVideosFailTheirOwnItem(pool(), load));
  it("a variable-frame-rate file: the timeline is ffprobe's, time-based clips hold the frame shown at each time", () =>
    vfrClipsFollowTime(pool(), load));
  it('a Parquet file of videos (the Hub Video struct, a ClassLabel): the clips of the same videos as a list; a row without bytes fails alone; ranks share the rows', () =>
    parquetVideosAreTheListsClips(pool(), load));
  it('a long MP4 over HTTP ranges and as a local file: the loader reads its index and its clips GOPs, under twice their bytes', async () => {
    let served = 0;
    const server = await serveOnNode(rangeHandler(load, (n) => (served += n)));
    try {
      await longVideoReadsItsGops(pool(), `${server.url}/long.h264.mp4`, load, () => served);
    } finally {
      await server.close();
    }
    await longVideoReadsItsGops(pool(), join(import.meta.dirname, '../fixtures/generated/long.h264.mp4'), load);
  });
  it('a long WebM over HTTP ranges and as a local file: walked in a few large reads (its frames are small), then its clips packets', async () => {
    await longVideoReadsItsGops(pool(), join(import.meta.dirname, '../fixtures/generated/long.vp9.webm'), load, undefined, 'long.vp9.webm');
    let served = 0;
    const server = await serveOnNode(rangeHandler(load, (n) => (served += n)));
    try {
      await longVideoReadsItsGops(pool(), `${server.url}/long.vp9.webm`, load, () => served, 'long.vp9.webm');
    } finally {
      await server.close();
    }
  });
  it('60 mutated videos on the wasm road: each delivered or failed with a typed error, nothing hangs, the loader goes on', async () => {
    await mutatedVideosFailTyped(pool(), load, 'cpu', 'wasm', 60, 0x71de1);
  });
  it('indexes kept for the next epoch: it reads only the clips packets, in ranges, and gives the clips of a loader that keeps none', () =>
    indexesKeptForLaterEpochs(
      pool(),
      ['long.h264.mp4', 'long.vp9.webm', 'testsrc.vp9.webm', 'testsrc.h264.mkv'].map((f) =>
        join(import.meta.dirname, '../fixtures/generated', f),
      ),
    ));
  it('60 mutated videos, each WebM and MKV walked through ranged reads: each delivered or failed typed, the loader goes on', async () => {
    const { delivered, failed } = await mutatedVideosFailTyped(pool(), load, 'cpu', 'wasm', 60, 0x71de3, 0);
    expect(delivered + failed).toBe(60);
  });
});
