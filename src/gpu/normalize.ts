import { OptionChecker } from '../errors/index.ts';
import { readText } from '../runtime/index.ts';
import { BindGroupPairs, encodePass, align4, dispatchGrid, meanAndInverseStd } from './dispatch.ts';
import { UniformStruct, uniformBuffer } from './uniforms.ts';

/** `struct Params` of normalize.wgsl. */
export const NormalizeParams = new UniformStruct('Params', [
  ['pixels_per_image', 'u32'],
  ['images', 'u32'],
  ['channels', 'u32'],
  ['row_pitch', 'u32'],
  ['mean', 'vec4f'],
  ['inv_std', 'vec4f'],
] as const);

export interface BatchShape {
  images: number;
  height: number;
  width: number;
  channels: number;
}

export interface NormalizeOptions {
  /** Per-channel mean and standard deviation on the 0..1 scale (ImageNet's by default). */
  mean?: readonly number[];
  std?: readonly number[];
  /** Output layout: channels first (NCHW, the default: PyTorch, ONNX, Tandem's ViT) or last (NHWC: TensorFlow.js). */
  layout?: TensorLayout;
}

export type TensorLayout = 'NCHW' | 'NHWC';

/** A batch shape's four whole numbers, checked before any buffer is sized from them. */
export function checkBatchShape(where: string, shape: BatchShape): void {
  const o = new OptionChecker(where, shape, ['images', 'height', 'width', 'channels']);
  o.integer('images', 0, 1, 65536);
  o.integer('height', 0, 1, 32768);
  o.integer('width', 0, 1, 32768);
  o.integer('channels', 0, 1, 4);
}

export const IMAGENET_MEAN = [0.485, 0.456, 0.406, 0] as const;
export const IMAGENET_STD = [0.229, 0.224, 0.225, 1] as const;

/** u8 NHWC → f32 NCHW normalisation on the GPU: the per-pixel work the CPU should not do. */
export class NormalizeKernel {
  readonly shape: BatchShape;
  #device: GPUDevice;
  #pipeline: GPUComputePipeline;
  #params: GPUBuffer;
  #groups: [number, number];
  #bindGroups = new BindGroupPairs();
  #makeBindGroup = this.#createBindGroup.bind(this);

  private constructor(device: GPUDevice, pipeline: GPUComputePipeline, shape: BatchShape, options: NormalizeOptions) {
    this.#device = device;
    this.#pipeline = pipeline;
    this.shape = shape;
    const grid = dispatchGrid(shape.images * shape.height * shape.width);
    this.#groups = grid.groups;
    const { mean, invStd } = meanAndInverseStd(options.mean ?? IMAGENET_MEAN, options.std ?? IMAGENET_STD);
    const params = NormalizeParams.pack({
      pixels_per_image: shape.height * shape.width,
      images: shape.images,
      channels: shape.channels,
      row_pitch: grid.rowPitch,
      mean,
      inv_std: invStd,
    });
    this.#params = uniformBuffer(device, params, 'tandem normalize params');
  }

  static async create(device: GPUDevice, shape: BatchShape, options: NormalizeOptions = {}): Promise<NormalizeKernel> {
    checkBatchShape('NormalizeKernel.create shape', shape);
    const o = new OptionChecker('NormalizeKernel.create options', options, ['mean', 'std', 'layout']);
    o.numbers('mean', shape.channels);
    o.numbers('std', shape.channels, 0);
    if (o.raw('layout') !== undefined) o.oneOf('layout', 'NCHW', ['NCHW', 'NHWC']);
    const code = await readText(new URL('./normalize.wgsl', import.meta.url));
    const module = device.createShaderModule({ code, label: 'tandem normalize' });
    const pipeline = await device.createComputePipelineAsync({
      layout: 'auto',
      compute: { module, entryPoint: 'main', constants: { channels_last: options.layout === 'NHWC' ? 1 : 0 } },
      label: 'tandem normalize',
    });
    return new NormalizeKernel(device, pipeline, shape, options);
  }

  /** Bytes of the u8 input and of the f32 output for this shape. */
  get inputBytes(): number {
    const { images, height, width, channels } = this.shape;
    return images * height * width * channels;
  }

  get outputBytes(): number {
    return this.inputBytes * 4;
  }

  /** Records the normalisation of `input` into `output` on `encoder`. */
  encode(encoder: GPUCommandEncoder, input: GPUBuffer, output: GPUBuffer): void {
    encodePass(encoder, 'tandem normalize', this.#pipeline, this.#bindGroups.get(input, output, this.#makeBindGroup), this.#groups);
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
  }

  #createBindGroup(input: GPUBuffer, output: GPUBuffer): GPUBindGroup {
    return this.#device.createBindGroup({
      layout: this.#pipeline.getBindGroupLayout(0),
      entries: [
        { binding: 0, resource: { buffer: input, size: align4(this.inputBytes) } },
        { binding: 1, resource: { buffer: output, size: this.outputBytes } },
        { binding: 2, resource: { buffer: this.#params } },
      ],
    });
  }
}

/**
 * The CPU version of NormalizeKernel: its reference in tests, and the path for frameworks that
 * run on the CPU. Writes into `out` when given (at least images × pixels × channels floats).
 */
export function normalizeReference(
  input: Uint8Array,
  shape: BatchShape,
  options: NormalizeOptions = {},
  into?: Float32Array,
): Float32Array {
  const { images, height, width, channels } = shape;
  const hw = height * width;
  const mean = options.mean ?? IMAGENET_MEAN;
  const std = options.std ?? IMAGENET_STD;
  const channelsLast = options.layout === 'NHWC';
  const out = into ?? new Float32Array(images * channels * hw);
  for (let n = 0; n < images; n++) {
    for (let p = 0; p < hw; p++) {
      for (let c = 0; c < channels; c++) {
        const at = (n * hw + p) * channels + c;
        const v = (input[at] ?? 0) / 255;
        out[channelsLast ? at : (n * channels + c) * hw + p] = (v - (mean[c] ?? 0)) / (std[c] ?? 1);
      }
    }
  }
  return out;
}
