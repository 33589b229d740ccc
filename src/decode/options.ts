import type { FILTER_CODES, FIT_CODES } from './abi.ts';

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
  /** Let JPEG decode at 1/2, 1/4 or 1/8 scale in the DCT domain when still ≥ the target (default true). */
  reducedScale?: boolean;
  applyOrientation?: boolean;
}
