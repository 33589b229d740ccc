import { describe, expect, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { fetchFixture as load } from '../shared/browser-fixtures.ts';
import { inBothPoolModes } from '../shared/decode-scenarios.ts';
import { mediaScenarios } from '../shared/media-scenarios.ts';
import { usePool } from '../shared/use-pool.ts';
import { audioMatchesFfmpegCli, videoMatchesFfmpegCli } from '../shared/cli-reference-scenarios.ts';
import { fixturesMatchAcrossModes } from '../shared/fallback-scenarios.ts';
import { coverMatchesTorchvision, imageFormatsMatchReferences } from '../shared/image-format-scenarios.ts';
import * as crop from '../shared/random-crop-scenarios.ts';
import { windowedDecodesEqualWholeDecodes } from '../shared/window-scenarios.ts';

describe('wasm audio and video decoding (Chromium, cross-origin isolated)', () => {
  const pool = usePool({ threads: 2 });

  for (const [title, body] of Object.entries(mediaScenarios)) it(title, () => body(pool(), load));
  it("every frame of an H.264, a VP9, an HEVC and two AV1 clips (HEVC and AV1: times as ffprobe gives them) against Debian's ffmpeg CLI", () =>
    videoMatchesFfmpegCli(pool(), load));
  it("MP3, FLAC and AAC sines against Debian's ffmpeg CLI", () => audioMatchesFfmpegCli(pool(), load));
});

describe('image formats against PIL (Chromium)', () => {
  it("progressive and CMYK JPEG, WebP (lossy, lossless, alpha), first GIF frame, torchvision's Resize + CenterCrop, in both pool modes", async () => {
    await inBothPoolModes(1, async (pool) => {
      expect(await imageFormatsMatchReferences(pool, load)).toHaveLength(8);
      await coverMatchesTorchvision(pool, load);
    });
  });
  it('the worker fallback gives the pthreads bytes on every image fixture, a video and an audio file', async () => {
    const threads = await DecodePool.create({ threads: 1, mode: 'pthreads' });
    const workers = await DecodePool.create({ threads: 1, mode: 'workers' });
    try {
      expect(await fixturesMatchAcrossModes(threads, workers, load)).toBe(22);
    } finally {
      await threads.close();
      await workers.close();
    }
  });
});

describe('RandomResizedCrop + flip fused into decode (Chromium)', () => {
  it("torchvision's boxes, pixels and draw statistics; reproducible; windowed JPEG decodes equal whole ones; in both pool modes", async () => {
    await inBothPoolModes(2, async (pool, mode) => {
      await crop.randomCropMatchesTorchvision(pool, load);
      expect(await crop.randomCropIsReproducible(pool, load)).toBe(23);
      expect(await windowedDecodesEqualWholeDecodes(pool, load)).toBe(15 * 14);
      if (mode === 'pthreads') expect(await crop.randomCropStatisticsMatchTorchvision(pool, load)).toBe(148);
    });
  });
});
