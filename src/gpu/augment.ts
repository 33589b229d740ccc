import { OptionChecker } from '../errors/index.ts';
import { readText } from '../runtime/index.ts';
import { streamFor } from '../random/index.ts';
import { BindGroupPairs, encodePass, align4, dispatchGrid, meanAndInverseStd } from './dispatch.ts';
import { IMAGENET_MEAN, IMAGENET_STD, type NormalizeOptions } from './normalize.ts';
import { UniformStruct, uniformBuffer } from './uniforms.ts';

/** `struct Params` of augment.wgsl. */
export const AugmentParams = new UniformStruct('Params', [
  ['src_width', 'u32'],
  ['src_height', 'u32'],
  ['out_width', 'u32'],
  ['out_height', 'u32'],
  ['images', 'u32'],
  ['channels', 'u32'],
  ['row_pitch', 'u32'],
  ['_pad', 'u32'],
  ['mean', 'vec4f'],
  ['inv_std', 'vec4f'],
] as const);

export interface AugmentOptions extends NormalizeOptions {
  /** Area fraction of the crop (torchvision RandomResizedCrop's scale); default [0.08, 1]. */
  scale?: readonly [number, number];
  /** Aspect ratio range, sampled log-uniformly; default [3/4, 4/3]. */
  ratio?: readonly [number, number];
  /** Probability of a horizontal flip; default 0.5. */
  flip?: number;
  /** Brightness offset drawn from ±brightness (0..1 scale); default 0.2. */
  brightness?: number;
  /** Contrast factor drawn from 1 ± contrast; default 0.2. */
  contrast?: number;
}

export interface AugmentShape {
  /** Most images per batch. */
  images: number;
  srcHeight: number;
  srcWidth: number;
  channels: number;
  outHeight: number;
  outWidth: number;
}

/** One element of augment.wgsl's per-sample storage array (a test checks it against the WGSL). */
export const AugmentSample = new UniformStruct('Sample', [
  ['crop', 'vec4f'],
  ['flip', 'f32'],
  ['brightness', 'f32'],
  ['contrast', 'f32'],
  ['_pad', 'f32'],
] as const);

/** Floats per sample in the per-batch parameter buffer, and each field's float offset in it. */
export const SAMPLE_FLOATS = AugmentSample.bytes / 4;
const CROP = AugmentSample.offsetOf('crop') / 4;
const FLIP = AugmentSample.offsetOf('flip') / 4;
const BRIGHTNESS = AugmentSample.offsetOf('brightness') / 4;
const CONTRAST = AugmentSample.offsetOf('contrast') / 4;

/**
 * Per-sample augmentation parameters from a seeded stream: sample `id` gets the same crop, flip and
 * jitter for the same seed, whatever the batch it lands in. Written into `out` (no allocation).
 */
export function sampleAugmentations(
  seed: number,
  ids: ArrayLike<number>,
  shape: AugmentShape,
  options: AugmentOptions,
  out: Float32Array,
): Float32Array {
  const [minScale, maxScale] = options.scale ?? [0.08, 1];
  const [minRatio, maxRatio] = options.ratio ?? [3 / 4, 4 / 3];
  const { srcWidth: w, srcHeight: h } = shape;
  for (let i = 0; i < ids.length; i++) {
    const rng = streamFor(seed, ids[i] ?? 0, 0xa11);
    let box: [number, number, number, number] | undefined;
    for (let attempt = 0; attempt < 10 && !box; attempt++) {
      const area = w * h * (minScale + rng.float() * (maxScale - minScale));
      const ratio = Math.exp(Math.log(minRatio) + rng.float() * (Math.log(maxRatio) - Math.log(minRatio)));
      const cw = Math.round(Math.sqrt(area * ratio));
      const ch = Math.round(Math.sqrt(area / ratio));
      if (cw > 0 && ch > 0 && cw <= w && ch <= h) box = [rng.int(w - cw + 1), rng.int(h - ch + 1), cw, ch];
    }
    box ??= [0, 0, w, h];
    const o = i * SAMPLE_FLOATS;
    out.fill(0, o, o + SAMPLE_FLOATS);
    out.set(box, o + CROP);
    out[o + FLIP] = rng.float() < (options.flip ?? 0.5) ? 1 : 0;
    const b = options.brightness ?? 0.2;
    const c = options.contrast ?? 0.2;
    out[o + BRIGHTNESS] = (rng.float() * 2 - 1) * b;
    out[o + CONTRAST] = 1 + (rng.float() * 2 - 1) * c;
  }
  return out;
}

/** Random resized crop + flip + brightness/contrast jitter + normalisation, in WGSL. */
export class AugmentKernel {
  readonly shape: AugmentShape;
  readonly options: AugmentOptions;
  #device: GPUDevice;
  #pipeline: GPUComputePipeline;
  #params: GPUBuffer;
  #samples: GPUBuffer;
  #sampleData: Float32Array<ArrayBuffer>;
  #groups: [number, number];
  #bindGroups = new BindGroupPairs();
  #makeBindGroup = this.#createBindGroup.bind(this);

  private constructor(device: GPUDevice, pipeline: GPUComputePipeline, shape: AugmentShape, options: AugmentOptions) {
    this.#device = device;
    this.#pipeline = pipeline;
    this.shape = shape;
    this.options = options;
    const grid = dispatchGrid(shape.images * shape.outHeight * shape.outWidth);
    this.#groups = grid.groups;
    const { mean, invStd } = meanAndInverseStd(options.mean ?? IMAGENET_MEAN, options.std ?? IMAGENET_STD);
    const params = AugmentParams.pack({
      src_width: shape.srcWidth,
      src_height: shape.srcHeight,
      out_width: shape.outWidth,
      out_height: shape.outHeight,
      images: shape.images,
      channels: shape.channels,
      row_pitch: grid.rowPitch,
      mean,
      inv_std: invStd,
    });
    this.#params = uniformBuffer(device, params, 'tandem augment params');
    this.#sampleData = new Float32Array(shape.images * SAMPLE_FLOATS);
    this.#samples = device.createBuffer({ size: this.#sampleData.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  }

  static async create(device: GPUDevice, shape: AugmentShape, options: AugmentOptions = {}): Promise<AugmentKernel> {
    const s = new OptionChecker('AugmentKernel.create shape', shape, [
      'images',
      'srcHeight',
      'srcWidth',
      'channels',
      'outHeight',
      'outWidth',
    ]);
    for (const side of ['images', 'srcHeight', 'srcWidth', 'outHeight', 'outWidth']) s.integer(side, 0, 1, 32768);
    s.integer('channels', 0, 1, 4);
    const o = new OptionChecker('AugmentKernel.create options', options, [
      'mean',
      'std',
      'layout',
      'scale',
      'ratio',
      'flip',
      'brightness',
      'contrast',
    ]);
    o.numbers('mean', shape.channels);
    o.numbers('std', shape.channels, 0);
    o.numbers('scale', 2, 0);
    o.numbers('ratio', 2, 0);
    o.number('flip', 0.5, 0, 1);
    o.number('brightness', 0.2, 0, 1);
    o.number('contrast', 0.2, 0, 1);
    const code = await readText(new URL('./augment.wgsl', import.meta.url));
    const module = device.createShaderModule({ code, label: 'tandem augment' });
    const pipeline = await device.createComputePipelineAsync({
      layout: 'auto',
      compute: { module, entryPoint: 'main' },
      label: 'tandem augment',
    });
    return new AugmentKernel(device, pipeline, shape, options);
  }

  get outputBytes(): number {
    const s = this.shape;
    return s.images * s.channels * s.outHeight * s.outWidth * 4;
  }

  /**
   * Records the augmentation of the batch in `input` (samples `ids`, in order) into `output`.
   * The parameters go through writeBuffer, which the queue orders before this encoder's submit.
   */
  encode(encoder: GPUCommandEncoder, input: GPUBuffer, output: GPUBuffer, seed: number, ids: ArrayLike<number>): void {
    sampleAugmentations(seed, ids, this.shape, this.options, this.#sampleData);
    this.#device.queue.writeBuffer(this.#samples, 0, this.#sampleData);
    encodePass(encoder, 'tandem augment', this.#pipeline, this.#bindGroups.get(input, output, this.#makeBindGroup), this.#groups);
  }

  /** Frees the kernel's uniform buffers (the pipeline itself needs no freeing). */
  close(): void {
    this.destroy();
  }

  [Symbol.dispose](): void {
    this.destroy();
  }

  /** @deprecated The same as close(), which every Tandem resource has; use close(). */
  destroy(): void {
    this.#params.destroy();
    this.#samples.destroy();
  }

  #createBindGroup(input: GPUBuffer, output: GPUBuffer): GPUBindGroup {
    const s = this.shape;
    return this.#device.createBindGroup({
      layout: this.#pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: input, size: align4(s.images * s.srcHeight * s.srcWidth * s.channels) } },
        { binding: 1, resource: { buffer: output, size: this.outputBytes } },
        { binding: 2, resource: { buffer: this.#params } },
        { binding: 3, resource: { buffer: this.#samples } },
      ],
    });
  }
}

/** CPU reference of AugmentKernel for `count` images with the given per-sample parameters. */
export function augmentReference(
  input: Uint8Array,
  count: number,
  shape: AugmentShape,
  samples: Float32Array,
  options: NormalizeOptions = {},
): Float32Array {
  const { srcWidth: sw, srcHeight: sh, outWidth: ow, outHeight: oh, channels: ch } = shape;
  const norm = meanAndInverseStd(options.mean ?? IMAGENET_MEAN, options.std ?? IMAGENET_STD);
  const f = Math.fround;
  const out = new Float32Array(count * ch * oh * ow);
  const texel = (n: number, x: number, y: number, c: number) => input[((n * sh + y) * sw + x) * ch + c] ?? 0;
  for (let n = 0; n < count; n++) {
    const at = (field: number) => samples[n * SAMPLE_FLOATS + field] ?? 0;
    const [cx, cy, cw, chh] = [at(CROP), at(CROP + 1), at(CROP + 2), at(CROP + 3)];
    const [flip, bright, contrast] = [at(FLIP), at(BRIGHTNESS), at(CONTRAST)];
    for (let y = 0; y < oh; y++) {
      for (let x0 = 0; x0 < ow; x0++) {
        const x = flip > 0.5 ? ow - 1 - x0 : x0;
        const fx = Math.min(Math.max(f(cx + f(f((x + 0.5) * cw) / ow) - 0.5), 0), sw - 1);
        const fy = Math.min(Math.max(f(cy + f(f((y + 0.5) * chh) / oh) - 0.5), 0), sh - 1);
        const xa = Math.floor(fx),
          ya = Math.floor(fy);
        const xb = Math.min(xa + 1, sw - 1),
          yb = Math.min(ya + 1, sh - 1);
        const ax = fx - xa,
          ay = fy - ya;
        for (let c = 0; c < ch; c++) {
          const top = texel(n, xa, ya, c) * (1 - ax) + texel(n, xb, ya, c) * ax;
          const bottom = texel(n, xa, yb, c) * (1 - ax) + texel(n, xb, yb, c) * ax;
          let v = (top * (1 - ay) + bottom * ay) / 255;
          v = Math.min(Math.max((v - 0.5) * contrast + 0.5 + bright, 0), 1);
          out[((n * ch + c) * oh + y) * ow + x0] = (v - norm.mean[c]!) * norm.invStd[c]!;
        }
      }
    }
  }
  return out;
}
