// What a clip's frames are written into, and which pixels of a frame the output reads: the
// wasm path's geometry (wasm/src/image.c), so that both decode paths crop and fit alike.
import { OptionChecker } from '../errors/index.ts';
import { IMAGENET_MEAN, IMAGENET_STD } from '../gpu/index.ts';

/** Where a clip's frames land: f32 NHWC, slot i at element (firstFrame + i) · height · width · channels. */
export interface ClipFrameTarget {
  /** A STORAGE buffer on the decoder's device, large enough for every slot of the clip. */
  buffer: GPUBuffer;
  /** Index of this clip's first slot in `buffer`. */
  firstFrame: number;
  width: number;
  height: number;
  /** 3 (RGB) or 4 (RGBA, alpha 255 before normalisation). */
  channels: 3 | 4;
  /** 'cover': shorter side to size, centre crop (torchvision Resize + CenterCrop); 'stretch': the whole area. */
  fit: 'cover' | 'stretch';
  /** Source pixels kept before fitting (whole pixels, as the wasm path rounds them). */
  crop?: { x: number; y: number; width: number; height: number };
  /** Mirror the output horizontally. */
  flip: boolean;
  /** Per channel, on the 0..1 scale (ImageNet's by default): out = (v / 255 − mean) / std. */
  mean?: readonly number[];
  std?: readonly number[];
}

/** A source rectangle in frame pixels, fractional (resize.h's td_area). */
export interface SourceArea {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** resize.c's limit: beyond a 127× downscale its tap table overflows (the wasm path hands over to libswscale). */
export const MAX_DOWNSCALE = 127;

/** Checks a target's fields (OptionError on a bad one) and returns its mean and 1/std as f32. */
export function checkTarget(where: string, target: ClipFrameTarget, slots: number): { mean: number[]; invStd: number[] } {
  const o = new OptionChecker(where, target, ['buffer', 'firstFrame', 'width', 'height', 'channels', 'fit', 'crop', 'flip', 'mean', 'std']);
  const buffer = o.raw('buffer') as GPUBuffer | undefined;
  if (typeof buffer !== 'object' || buffer === null || typeof buffer.size !== 'number') return o.fail('buffer', 'a GPUBuffer');
  if ((buffer.usage & GPUBufferUsage.STORAGE) === 0) o.fail('buffer', 'a buffer with STORAGE usage');
  const first = o.integer('firstFrame', 0, 0);
  const width = o.integer('width', 0, 1, 32768);
  const height = o.integer('height', 0, 1, 32768);
  const channels = o.integer('channels', 0, 3, 4);
  o.oneOf('fit', 'cover', ['cover', 'stretch']);
  o.boolean('flip', false);
  const crop = o.raw('crop') as ClipFrameTarget['crop'];
  if (crop !== undefined) {
    const c = new OptionChecker(`${where} crop`, crop, ['x', 'y', 'width', 'height']);
    c.number('x', 0, 0);
    c.number('y', 0, 0);
    c.number('width', 0, 1);
    c.number('height', 0, 1);
  }
  const mean = o.numbers('mean', channels) ?? IMAGENET_MEAN;
  const std = o.numbers('std', channels, 0) ?? IMAGENET_STD;
  const needed = (first + slots) * width * height * channels * 4;
  if (needed > buffer.size) o.fail('buffer', `at least ${needed} bytes for slots ${first}..${first + slots - 1}`);
  const all = [0, 1, 2, 3];
  return { mean: all.map((c) => Math.fround(mean[c] ?? 0)), invStd: all.map((c) => Math.fround(1 / (std[c] ?? 1))) };
}

/**
 * The frame area the output reads, in whole pixels, as the wasm path plans a video frame's
 * (plan_geometry in wasm/src/image.c, which td_scale_frame uses): the crop rounded to whole pixels,
 * then for 'cover' the centred window of the target's aspect inside it, its offset truncated;
 * 'stretch' reads the whole crop (or frame). Undefined when the crop leaves the frame. (Images use
 * torchvision's fractional Resize + CenterCrop area instead; video frames do not.)
 */
export function sourceArea(frameWidth: number, frameHeight: number, target: ClipFrameTarget): SourceArea | undefined {
  const { width: dw, height: dh, crop } = target;
  let r = { x: 0, y: 0, w: frameWidth, h: frameHeight };
  if (crop) {
    if (crop.x + crop.width > frameWidth || crop.y + crop.height > frameHeight) return undefined;
    r = {
      x: Math.trunc(crop.x),
      y: Math.trunc(crop.y),
      w: Math.max(1, Math.trunc(crop.width + 0.5)),
      h: Math.max(1, Math.trunc(crop.height + 0.5)),
    };
  }
  if (target.fit === 'cover') {
    const s = Math.max(dw / r.w, dh / r.h);
    const cw = Math.min(r.w, Math.trunc(dw / s + 0.5));
    const ch = Math.min(r.h, Math.trunc(dh / s + 0.5));
    r = { x: r.x + Math.trunc((r.w - cw) / 2), y: r.y + Math.trunc((r.h - ch) / 2), w: Math.max(1, cw), h: Math.max(1, ch) };
  }
  return r;
}
