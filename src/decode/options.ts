import { FILTER_CODES, FIT_CODES, Field } from './abi.ts';
import { DecodeError } from './errors.ts';

const DEFAULT_MAX_PIXELS = 64 * 1024 * 1024;

/** How decoded pixels land in the target: size, channels, fit, filter, crop, limits. */
export interface ResizeOptions {
  width: number;
  height: number;
  /** 1 gray, 3 RGB (default), 4 RGBA; output is u8 HWC. */
  channels?: 1 | 3 | 4;
  /** 'cover' (default): shorter side to size, then centre crop (torchvision Resize + CenterCrop). */
  fit?: keyof typeof FIT_CODES;
  filter?: keyof typeof FILTER_CODES;
  /** Crop box in (oriented) source pixels, applied before fitting. */
  crop?: { x: number; y: number; width: number; height: number };
  /** Limit on width × height, as declared by the header and as decoded (default 64 Mpx). */
  maxPixels?: number;
  padValue?: number;
}

/**
 * torchvision's `RandomResizedCrop(size, scale, ratio)` followed by `RandomHorizontalFlip(flip)`,
 * drawn inside the decoder once the header gives the image's size, so that a JPEG is decoded at
 * the DCT scale the crop needs rather than the whole image's. The same seed gives the same crop
 * and flip for the same image, in every runtime.
 */
export interface RandomCropOptions {
  /** This image's draw; different seeds give independent crops (ImageBatcher derives one per item). */
  seed: number;
  /** Share of the image's area the crop covers, drawn uniformly (default [0.08, 1]). */
  scale?: readonly [number, number];
  /** Width ÷ height of the crop, drawn log-uniformly (default [3/4, 4/3]). */
  ratio?: readonly [number, number];
  /** Chance of a horizontal flip (default 0.5; 0 for none). */
  flip?: number;
}

export interface ImageDecodeOptions extends ResizeOptions {
  /** Let JPEG decode at a reduced scale M/8 in the DCT domain when still ≥ the target (default true). */
  reducedScale?: boolean;
  applyOrientation?: boolean;
  /** A random crop stretched over the target, then maybe flipped (excludes `crop`; `fit` is ignored). */
  randomCrop?: RandomCropOptions;
  /**
   * JPEG: decode only the rows and columns the output reads (default true). The pixels are the
   * same either way (the tests compare them); false decodes every pixel, for checking that.
   */
  decodeWindow?: boolean;
}

const MILLIONTHS = 1e6;

/** Writes a random crop request; refuses ranges the decoder could not draw from. */
export function writeRandomCrop(w: Int32Array, r: RandomCropOptions): void {
  const [scaleLo, scaleHi] = r.scale ?? [0.08, 1];
  const [ratioLo, ratioHi] = r.ratio ?? [3 / 4, 4 / 3];
  const flip = r.flip ?? 0.5;
  if (!(scaleLo > 0 && scaleLo <= scaleHi && scaleHi <= 1))
    throw new DecodeError('bad-request', `randomCrop.scale must satisfy 0 < lo ≤ hi ≤ 1, got [${scaleLo}, ${scaleHi}]`);
  if (!(ratioLo > 0 && ratioLo <= ratioHi && ratioHi < 1000))
    throw new DecodeError('bad-request', `randomCrop.ratio must satisfy 0 < lo ≤ hi, got [${ratioLo}, ${ratioHi}]`);
  if (!(flip >= 0 && flip <= 1)) throw new DecodeError('bad-request', `randomCrop.flip must be a chance in [0, 1], got ${flip}`);
  if (!Number.isInteger(r.seed)) throw new DecodeError('bad-request', `randomCrop.seed must be an integer, got ${r.seed}`);
  w[Field.RrcSeed] = r.seed | 0;
  w[Field.RrcScaleLo] = Math.max(1, Math.round(scaleLo * MILLIONTHS));
  w[Field.RrcScaleHi] = Math.round(scaleHi * MILLIONTHS);
  w[Field.RrcRatioLo] = Math.max(1, Math.round(ratioLo * MILLIONTHS));
  w[Field.RrcRatioHi] = Math.round(ratioHi * MILLIONTHS);
  w[Field.FlipChance] = Math.round(flip * MILLIONTHS);
}

/** Writes the resize fields shared by image and video jobs into a job record. */
export function writeResize(w: Int32Array, targetPtr: number, o: ResizeOptions): void {
  w[Field.Dst] = targetPtr;
  w[Field.DstW] = o.width;
  w[Field.DstH] = o.height;
  w[Field.Channels] = o.channels ?? 3;
  w[Field.Fit] = FIT_CODES[o.fit ?? 'cover'];
  w[Field.Filter] = FILTER_CODES[o.filter ?? 'bilinear'];
  w[Field.MaxPixels] = Math.min(o.maxPixels ?? DEFAULT_MAX_PIXELS, 0x7fffffff);
  if (o.crop) {
    w[Field.CropX] = o.crop.x;
    w[Field.CropY] = o.crop.y;
    w[Field.CropW] = o.crop.width;
    w[Field.CropH] = o.crop.height;
  }
  w[Field.PadValue] = o.padValue ?? 0;
}
