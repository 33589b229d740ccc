// JPEGs are decoded only where the output reads them (wasm/src/jpeg.c: rows and columns outside
// skip the IDCT, upsampling and colour conversion). That must never change a pixel: every request
// here is decoded twice, windowed and whole (decodeWindow: false), and the bytes must be equal.
// The requests cover what moves the window: fit (cover crops the long side, contain and stretch
// read everything), crop boxes, random crops, reduced DCT scales, every EXIF orientation, 4:2:0
// and 4:4:4, progressive, gray and CMYK files, 1/3/4 channels and the swscale filters. Crop boxes
// fit the smallest file (97×61). Each decode reports the pixels it decoded out of its frame: a
// whole decode all of them, a windowed one no more, and less where the output reads a small part.
import type { DecodePool, ImageDecodeOptions } from '../../src/decode/index.ts';
import { encodeJpeg, renderSample } from '../../src/synthetic/index.ts';
import { check } from './assert.ts';
import type { FixtureLoader } from './media-scenarios.ts';

const FILES = ['photo-landscape.jpg', 'photo-portrait.jpg', 'progressive-420.jpg', 'progressive.jpg', 'cmyk.jpg'];

function generated(): { name: string; bytes: Uint8Array }[] {
  const out: { name: string; bytes: Uint8Array }[] = [];
  const sample = renderSample(11, 0, { width: 333, height: 250 });
  for (let orientation = 1; orientation <= 8; orientation++)
    out.push({
      name: `exif-${orientation}`,
      bytes: encodeJpeg(sample.rgb, sample.width, sample.height, { quality: 88, exifOrientation: orientation }),
    });
  out.push({ name: '444', bytes: encodeJpeg(sample.rgb, sample.width, sample.height, { quality: 92, subsampling: '444' }) });
  const gray = new Uint8Array(sample.width * sample.height).map((_, i) => sample.rgb[i * 3] ?? 0);
  out.push({ name: 'gray', bytes: encodeJpeg(gray, sample.width, sample.height, { quality: 85 }) });
  return out;
}

// Requests whose output reads a small part of any of the files: their window must be smaller than the frame.
const CROP_BOX: ImageDecodeOptions = { width: 32, height: 32, crop: { x: 37, y: 21, width: 50, height: 37 } };
const CROP_BOX_STRETCHED: ImageDecodeOptions = {
  width: 120,
  height: 90,
  crop: { x: 5, y: 9, width: 80, height: 50 },
  fit: 'stretch',
  reducedScale: false,
};
const SMALL_RANDOM_CROP: ImageDecodeOptions = { width: 64, height: 64, randomCrop: { seed: 2, scale: [0.05, 0.2] } };
const READS_LITTLE = new Set([CROP_BOX, CROP_BOX_STRETCHED, SMALL_RANDOM_CROP]);

const REQUESTS: readonly ImageDecodeOptions[] = [
  { width: 224, height: 224, fit: 'cover' },
  { width: 224, height: 224, fit: 'cover', reducedScale: false },
  { width: 96, height: 64, fit: 'cover' },
  { width: 48, height: 160, fit: 'cover', channels: 1 },
  { width: 64, height: 64, fit: 'contain', padValue: 7 },
  { width: 80, height: 40, fit: 'stretch', channels: 4 },
  { width: 64, height: 64, fit: 'cover', filter: 'bicubic' },
  { width: 50, height: 50, fit: 'cover', filter: 'area' },
  CROP_BOX,
  CROP_BOX_STRETCHED,
  { width: 224, height: 224, randomCrop: { seed: 1 } },
  SMALL_RANDOM_CROP,
  { width: 112, height: 112, randomCrop: { seed: 3, scale: [0.3, 0.6] }, channels: 1 },
  { width: 200, height: 100, randomCrop: { seed: 4, ratio: [1.5, 3], flip: 1 } },
];

/** Returns how many decodes were compared. */
export async function windowedDecodesEqualWholeDecodes(pool: DecodePool, load: FixtureLoader): Promise<number> {
  const inputs = [...(await Promise.all(FILES.map(async (name) => ({ name, bytes: await load(name) })))), ...generated()];
  let compared = 0;
  let smaller = 0;
  for (const { name, bytes } of inputs) {
    for (const request of REQUESTS) {
      const windowed = await pool.decode(bytes, request);
      const whole = await pool.decode(bytes, { ...request, decodeWindow: false });
      let differ = 0;
      for (let i = 0; i < windowed.pixels.length; i++) if (windowed.pixels[i] !== whole.pixels[i]) differ++;
      check(
        differ === 0 && windowed.pixels.length === whole.pixels.length,
        `${name} ${JSON.stringify(request)}: ${differ} of ${windowed.pixels.length} bytes differ between a windowed and a whole decode`,
      );
      // The window is real: the whole decode decoded its whole frame, the windowed one no more, and
      // strictly less where the output reads a small part of the image.
      const w = windowed.info.decoded;
      const f = whole.info.decoded;
      check(f.width === f.frameWidth && f.height === f.frameHeight && f.width > 0, `${name}: a whole decode decoded ${JSON.stringify(f)}`);
      check(
        w.width <= w.frameWidth && w.height <= w.frameHeight && w.width > 0,
        `${name} ${JSON.stringify(request)}: decoded ${JSON.stringify(w)}`,
      );
      if (READS_LITTLE.has(request))
        check(
          w.width * w.height < w.frameWidth * w.frameHeight,
          `${name} ${JSON.stringify(request)}: the windowed decode decoded all ${w.frameWidth}×${w.frameHeight} pixels`,
        );
      if (w.width * w.height < w.frameWidth * w.frameHeight) smaller++;
      compared++;
    }
  }
  check(smaller >= inputs.length * READS_LITTLE.size, `only ${smaller} windowed decodes decoded less than their frame`);
  return compared;
}
