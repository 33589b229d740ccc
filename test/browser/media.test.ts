import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { mediaScenarios, type FixtureLoader } from '../shared/media-scenarios.ts';
import { audioMatchesFfmpegCli, videoMatchesFfmpegCli } from '../shared/cli-reference-scenarios.ts';
import { fixturesMatchAcrossModes } from '../shared/fallback-scenarios.ts';
import { coverMatchesTorchvision, imageFormatsMatchReferences } from '../shared/image-format-scenarios.ts';
import {
  randomCropIsReproducible,
  randomCropMatchesTorchvision,
  randomCropStatisticsMatchTorchvision,
} from '../shared/random-crop-scenarios.ts';
import { windowedDecodesEqualWholeDecodes } from '../shared/window-scenarios.ts';

// Served by the vite dev server from test/fixtures/generated (made by scripts/make-fixtures.sh).
const load: FixtureLoader = async (name) => {
  const response = await fetch(`/test/fixtures/generated/${name}`);
  if (!response.ok) throw new Error(`fixture ${name}: HTTP ${response.status}; run scripts/make-fixtures.sh`);
  return new Uint8Array(await response.arrayBuffer());
};

describe('wasm audio and video decoding (Chromium, cross-origin isolated)', () => {
  let pool: DecodePool;
  beforeAll(async () => {
    pool = await DecodePool.create({ threads: 2 });
  });
  afterAll(async () => {
    await pool?.close();
  });

  for (const [title, body] of Object.entries(mediaScenarios)) it(title, () => body(pool, load));
  it("every frame of an H.264 and a VP9 clip against Debian's ffmpeg CLI", () => videoMatchesFfmpegCli(pool, load));
  it("MP3, FLAC and AAC sines against Debian's ffmpeg CLI", () => audioMatchesFfmpegCli(pool, load));
});

describe('image formats against PIL (Chromium)', () => {
  it("progressive and CMYK JPEG, WebP (lossy, lossless, alpha), first GIF frame, torchvision's Resize + CenterCrop, in both pool modes", async () => {
    for (const mode of ['pthreads', 'workers'] as const) {
      const pool = await DecodePool.create({ threads: 1, mode });
      try {
        expect(await imageFormatsMatchReferences(pool, load)).toHaveLength(8);
        await coverMatchesTorchvision(pool, load);
      } finally {
        await pool.close();
      }
    }
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
    for (const mode of ['pthreads', 'workers'] as const) {
      const pool = await DecodePool.create({ threads: 2, mode });
      try {
        await randomCropMatchesTorchvision(pool, load);
        expect(await randomCropIsReproducible(pool, load)).toBe(23);
        expect(await windowedDecodesEqualWholeDecodes(pool, load)).toBe(15 * 14);
        if (mode === 'pthreads') expect(await randomCropStatisticsMatchTorchvision(pool, load)).toBe(148);
      } finally {
        await pool.close();
      }
    }
  });
});
