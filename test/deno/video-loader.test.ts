// Deno tier: videoLoader() to CPU clips on the wasm pool (Deno has no VideoDecoder: the wasm road),
// the same scenario bodies as Node.
import './limits.ts';
import { withPool } from '../shared/decode-scenarios.ts';
import { serveOnDeno } from '../shared/deno-serve.ts';
import { rangeHandler } from '../shared/stream-scenarios.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';
import {
  brokenVideosFailTheirOwnItem,
  cpuClipsFollowTheSampler,
  indexesKeptForLaterEpochs,
  longVideoReadsItsGops,
  mutatedVideosFailTyped,
  parquetVideosAreTheListsClips,
  sharedDecodesGiveEachClipItsFrames,
  vfrClipsFollowTime,
} from '../shared/video-loader-scenarios.ts';

const load: FixtureLoader = (name) => Deno.readFile(new URL(`../fixtures/generated/${name}`, import.meta.url));

Deno.test('videoLoader: hands out the clips the sampler draws', () => withPool(2, (p) => cpuClipsFollowTheSampler(p, load)).then(() => {}));
Deno.test('videoLoader: clips that share frames share one decode, each clip its decode alone', () =>
  withPool(2, (p) => sharedDecodesGiveEachClipItsFrames(p, load)).then(() => {}));
Deno.test('videoLoader: broken videos fail their own item with a typed error', () =>
  withPool(2, (p) => brokenVideosFailTheirOwnItem(p, load)).then(() => {}));
Deno.test('videoLoader: 60 mutated videos, each delivered or failed typed; the loader goes on', () =>
  withPool(2, (p) => mutatedVideosFailTyped(p, load, 'cpu', 'wasm', 60, 0x71de2)).then(() => {}));
Deno.test('videoLoader: a variable-frame-rate file, time-based clips hold the frame shown at each time', () =>
  withPool(2, (p) => vfrClipsFollowTime(p, load)).then(() => {}));
Deno.test('videoLoader: a Parquet file of videos gives the clips of the same videos as a list; ranks share its rows', () =>
  withPool(2, (p) => parquetVideosAreTheListsClips(p, load)).then(() => {}));
Deno.test('videoLoader: a long MP4 over HTTP ranges and as a local file reads its index and its clips GOPs only', () =>
  withPool(2, async (p) => {
    let served = 0;
    const server = await serveOnDeno(rangeHandler(load, (n) => (served += n)));
    try {
      await longVideoReadsItsGops(p, `${server.url}/long.h264.mp4`, load, () => served);
    } finally {
      await server.close();
    }
    await longVideoReadsItsGops(p, new URL('../fixtures/generated/long.h264.mp4', import.meta.url).pathname, load);
  }).then(() => {}));
Deno.test('videoLoader: a long WebM over HTTP ranges and as a local file is walked in a few large reads (its frames are small), then its clips packets', () =>
  withPool(2, async (p) => {
    let served = 0;
    const server = await serveOnDeno(rangeHandler(load, (n) => (served += n)));
    try {
      await longVideoReadsItsGops(p, `${server.url}/long.vp9.webm`, load, () => served, 'long.vp9.webm');
    } finally {
      await server.close();
    }
    await longVideoReadsItsGops(
      p,
      new URL('../fixtures/generated/long.vp9.webm', import.meta.url).pathname,
      load,
      undefined,
      'long.vp9.webm',
    );
  }).then(() => {}));
Deno.test('videoLoader: indexes kept for the next epoch, which reads only the clips packets and gives the clips of a loader that keeps none', () =>
  withPool(2, (p) =>
    indexesKeptForLaterEpochs(
      p,
      ['long.h264.mp4', 'long.vp9.webm', 'testsrc.vp9.webm', 'testsrc.h264.mkv'].map(
        (f) => new URL(`../fixtures/generated/${f}`, import.meta.url).pathname,
      ),
    ),
  ).then(() => {}));
