import { FILTER_CODES, FIT_CODES, Field } from './abi.ts';

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

export interface ImageDecodeOptions extends ResizeOptions {
  /** Let JPEG decode at a reduced scale M/8 in the DCT domain when still ≥ the target (default true). */
  reducedScale?: boolean;
  applyOrientation?: boolean;
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
