// The tests' own normalisation, written apart from src/gpu's normalizeReference (which the CPU
// feeders run), so a test that compares a feeder's floats with these can fail when the code under
// test changes; and fixed vectors, bytes in and floats out, worked out by hand and with numpy
// ((byte / 255 − mean) / std in f64, stored as f32), that pin both.
import { check, maxAbsDiff } from './assert.ts';

export interface HandShape {
  images: number;
  height: number;
  width: number;
  channels: number;
}

const IMAGENET = { mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225] };

/** NHWC bytes → NCHW (default) or NHWC floats, with per-channel mean and std (ImageNet's by default). */
export function normalizeByHand(
  bytes: Uint8Array,
  shape: HandShape,
  options: { layout?: 'NCHW' | 'NHWC'; mean?: readonly number[]; std?: readonly number[] } = {},
): Float32Array {
  const { images, height, width, channels } = shape;
  const mean = options.mean ?? IMAGENET.mean;
  const std = options.std ?? IMAGENET.std;
  const out = new Float32Array(images * height * width * channels);
  let at = 0;
  for (let n = 0; n < images; n++)
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++)
        for (let c = 0; c < channels; c++, at++) {
          const into = options.layout === 'NHWC' ? at : ((n * channels + c) * height + y) * width + x;
          out[into] = ((bytes[at] as number) / 255 - (mean[c] as number)) / (std[c] as number);
        }
  return out;
}

/** One 2×2 RGB image (NHWC bytes) with the floats it must give. */
export const FIXED_NORMALIZATION = {
  bytes: Uint8Array.from([0, 255, 128, 64, 32, 200, 17, 99, 250, 1, 254, 77]),
  shape: { images: 1, height: 2, width: 2, channels: 3 },
  imagenet: {
    NHWC: [
      -2.1179039478302, 2.4285714626312256, 0.4264923632144928, -1.0219197273254395, -1.4754902124404907, 1.681394338607788,
      -1.8267830610275269, -0.3025210201740265, 2.552854061126709, -2.1007792949676514, 2.411064386367798, -0.462396502494812,
    ],
    NCHW: [
      -2.1179039478302, -1.0219197273254395, -1.8267830610275269, -2.1007792949676514, 2.4285714626312256, -1.4754902124404907,
      -0.3025210201740265, 2.411064386367798, 0.4264923632144928, 1.681394338607788, 2.552854061126709, -0.462396502494812,
    ],
  },
  /** mean [0.5, 0.4, 0.3], std [0.2, 0.25, 0.3], NHWC: byte 0 in channel 0 is (0 − 0.5) / 0.2 = −2.5. */
  custom: {
    mean: [0.5, 0.4, 0.3],
    std: [0.2, 0.25, 0.3],
    NHWC: [
      -2.5, 2.4000000953674316, 0.673202633857727, -1.2450979948043823, -1.0980392694473267, 1.6143790483474731, -2.1666667461395264,
      -0.0470588244497776, 2.2679738998413086, -2.4803922176361084, 2.3843138217926025, 0.006535947788506746,
    ],
  },
} as const;

/** Checks a normalisation function against the fixed vectors; returns how many floats were compared. */
export function matchesFixedNormalization(
  normalize: (
    bytes: Uint8Array,
    shape: HandShape,
    options: { layout: 'NCHW' | 'NHWC'; mean?: readonly number[]; std?: readonly number[] },
  ) => Float32Array,
  what: string,
  tolerance = 1e-6,
): number {
  const f = FIXED_NORMALIZATION;
  const cases = [
    { got: normalize(f.bytes, f.shape, { layout: 'NHWC' }), want: f.imagenet.NHWC, name: 'ImageNet NHWC' },
    { got: normalize(f.bytes, f.shape, { layout: 'NCHW' }), want: f.imagenet.NCHW, name: 'ImageNet NCHW' },
    {
      got: normalize(f.bytes, f.shape, { layout: 'NHWC', mean: f.custom.mean, std: f.custom.std }),
      want: f.custom.NHWC,
      name: 'custom NHWC',
    },
  ];
  for (const c of cases) {
    check(c.got.length === c.want.length, `${what}, ${c.name}: ${c.got.length} floats`);
    const e = maxAbsDiff(c.got, c.want);
    check(e <= tolerance, `${what}, ${c.name}: differs from the fixed vector by ${e}`);
  }
  return cases.length * f.bytes.length;
}
