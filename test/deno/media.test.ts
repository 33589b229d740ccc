// Deno tier: audio and video decoding on the wasm pool, with the same scenario bodies as Node and Chromium.
// Compressed fixtures come from scripts/make-fixtures.sh (run by scripts/test.sh).
import './limits.ts';
import { inBothPoolModes, withPool } from '../shared/decode-scenarios.ts';
import { denoFixture as load, SANITIZED as opts } from '../shared/deno-serve.ts';
import { audioMatchesFfmpegCli, videoMatchesFfmpegCli } from '../shared/cli-reference-scenarios.ts';
import { coverMatchesTorchvision, imageFormatsMatchReferences } from '../shared/image-format-scenarios.ts';
import {
  randomCropIsReproducible,
  randomCropMatchesTorchvision,
  randomCropStatisticsMatchTorchvision,
} from '../shared/random-crop-scenarios.ts';
import { windowedDecodesEqualWholeDecodes } from '../shared/window-scenarios.ts';
import { mediaScenarios } from '../shared/media-scenarios.ts';

for (const [title, body] of Object.entries(mediaScenarios)) {
  Deno.test({ name: title, ...opts, fn: () => withPool(2, (p) => body(p, load)).then(() => {}) });
}
Deno.test({
  name: "every frame of an H.264, a VP9, an HEVC and two AV1 clips (HEVC and AV1: times as ffprobe gives them), and MP3/FLAC/AAC sines, against Debian's ffmpeg CLI",
  ...opts,
  fn: () =>
    withPool(2, async (p) => {
      await videoMatchesFfmpegCli(p, load);
      await audioMatchesFfmpegCli(p, load);
    }),
});

// Image formats our encoders do not write, made by Debian's PIL, against PIL's decode.
Deno.test({
  name: "progressive and CMYK JPEG, WebP (lossy, lossless, alpha), first GIF frame against PIL, torchvision's Resize + CenterCrop, in both pool modes",
  ...opts,
  fn: async () => {
    await inBothPoolModes(1, async (pool, mode) => {
      const checked = await imageFormatsMatchReferences(pool, load);
      if (checked.length !== 8) throw new Error(`${mode}: checked ${checked.length} of 8 files`);
      await coverMatchesTorchvision(pool, load);
    });
  },
});

Deno.test({
  name: "RandomResizedCrop + flip in decode: torchvision's boxes, pixels and draw statistics; reproducible; windowed JPEG decodes equal whole ones; in both pool modes",
  ...opts,
  fn: async () => {
    await inBothPoolModes(2, async (pool, mode) => {
      await randomCropMatchesTorchvision(pool, load);
      await randomCropIsReproducible(pool, load);
      await windowedDecodesEqualWholeDecodes(pool, load);
      if (mode === 'pthreads') await randomCropStatisticsMatchTorchvision(pool, load);
    });
  },
});
