// videoLoader() in headless Chromium: the wasm road to the GPU gives the CPU clips normalised, the
// WebCodecs road (VideoDecoder → WGSL frame pass) gives the wasm road's frames with no readback,
// and broken videos fail their own items on either road.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { onCpuAdapter } from '../../src/gpu/internal.ts';
import { videoLoader } from '../../src/video/index.ts';
import { fetchFixture as load } from '../shared/browser-fixtures.ts';
import { countReadbacks } from '../shared/readbacks.ts';
import { usePool } from '../shared/use-pool.ts';
import {
  brokenVideosFailTheirOwnItem,
  decodeLimitsReachEveryRoad,
  CLIP_FIXTURES,
  gpuClipsAreCpuClipsNormalised,
  longVideoReadsItsGops,
  mutatedVideosFailTyped,
  sharedDecodesGiveEachClipItsFrames,
  vfrClipsFollowTime,
  webcodecsRoadMatchesWasmRoad,
} from '../shared/video-loader-scenarios.ts';

/** Mean absolute difference per clip between the roads, 0..1 scale (measured: about 1/255): they share the resize and the colour matrix, not the YUV→RGB code. */
const ROAD_TOLERANCE = 2 / 255;

describe('videoLoader (Chromium)', () => {
  const pool = usePool({ threads: 2 });
  let gpu: GpuContext;
  beforeAll(async () => {
    gpu = await acquireGpu();
  });
  afterAll(() => {
    gpu?.close();
  });

  it('the wasm road to the GPU: each clip is the CPU clip normalised', () => gpuClipsAreCpuClipsNormalised(pool(), gpu, load));
  it('six clips a video, sharing decodes: the GPU clips are the CPU clips normalised, each CPU clip its decode alone', async () => {
    await sharedDecodesGiveEachClipItsFrames(pool(), load);
    await gpuClipsAreCpuClipsNormalised(pool(), gpu, load, 6);
  });
  it('a long MP4 as a File is read in slices: its index and its clips GOPs only', async () => {
    const file = new File([(await load('long.h264.mp4')) as Uint8Array<ArrayBuffer>], 'long.h264.mp4');
    await longVideoReadsItsGops(pool(), { file, key: 'long.h264.mp4' }, load);
  });
  it('a long WebM as a File: walked in a few large slices (its frames are small), then its clips packets', async () => {
    const file = new File([(await load('long.vp9.webm')) as Uint8Array<ArrayBuffer>], 'long.vp9.webm');
    await longVideoReadsItsGops(pool(), { file, key: 'long.vp9.webm' }, load, undefined, 'long.vp9.webm');
  });
  it('the WebCodecs road gives the wasm road its frames: same clips, times and labels, pixels within 2/255, no readback', async () => {
    const r = await webcodecsRoadMatchesWasmRoad(
      pool(),
      gpu,
      load,
      async (fn) => {
        const counted = await countReadbacks(fn);
        return { result: counted.result, readbacks: counted.readbacks };
      },
      ROAD_TOLERANCE,
    );
    console.log(
      `roads differ by ${(r.meanAbs * 255).toFixed(2)}/255 on average, ${(r.worstClipMeanAbs * 255).toFixed(2)}/255 on the worst clip`,
    );
    expect(r.clips).toBe(2 * CLIP_FIXTURES.length); // AV1 among them: Chromium's VideoDecoder takes it
  });
  it("the loader's decode limits reach the wasm decodes on the CPU road and the GPU road", () =>
    decodeLimitsReachEveryRoad(pool(), gpu, load));
  it("'auto' on a CPU adapter (SwiftShader here) sends every clip down the wasm road", async () => {
    expect(onCpuAdapter(gpu.device)).toBe(true);
    const bytes = await load('testsrc.h264.mp4');
    const data = videoLoader([{ bytes, label: 0, key: 'a' }], { clip: { frames: 2 }, size: 16, batchSize: 1, pool: pool(), to: gpu });
    for await (const batch of data) batch.release();
    await data.close();
    expect(data.roads()).toEqual({ webcodecs: 0, wasm: 1 });
  });
  it('the variable-frame-rate file on the WebCodecs road: each slot holds the frame ffprobe says is shown at its time', () =>
    vfrClipsFollowTime(pool(), load, gpu));
  it('broken videos fail their own items on the WebCodecs road too', () => brokenVideosFailTheirOwnItem(pool(), load, gpu));
  it('60 mutated videos on the WebCodecs road: each delivered or failed with a typed error, nothing hangs, the loader goes on', async () => {
    const r = await mutatedVideosFailTyped(pool(), load, gpu, 'webcodecs', 60, 0x71de0);
    console.log(`mutants: ${r.delivered} delivered, ${r.failed} failed ${JSON.stringify(r.codes)}`);
  }, 120_000);
});
