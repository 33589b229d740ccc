// loader()'s options: every one checked when loader() is called, before anything is allocated,
// with an OptionError naming the field and the value; defaults are what a PyTorch or tf.data user
// expects. The fields every loader shares are common-options.ts's. The result is the one settings object the loader reads.
import type { DecodePool, ImageDecodeOptions } from '../decode/index.ts';
import { MAX_BATCH_BYTES } from '../decode/internal.ts';
import { OptionChecker } from '../errors/index.ts';
import type { GpuContext, TensorLayout } from '../gpu/index.ts';
import { hardwareConcurrency } from '../runtime/index.ts';
import { checkCommonOptions, COMMON_OPTIONS, type CommonLoaderOptions, type CommonLoaderSettings } from './common-options.ts';
import type { LoaderState } from './state.ts';

/** How each image becomes `size`: torchvision's transforms, done inside the decode. */
export type LoaderTransform = 'cover' | 'random-crop' | 'contain' | 'stretch';

/** The parts of TensorFlow.js's namespace the loaders look for (the tf.js door checks the rest); never imported by Tandem. */
export interface TfNamespaceLike {
  tensor: (...args: never[]) => unknown;
  getBackend: () => string;
}

/** jax-js's namespace (`import * as jax from '@jax-js/jax'`), as far as the loaders look for it; never imported by Tandem. */
export interface JaxNamespace {
  numpy: object;
  defaultDevice(): string;
  getWebGPUDevice(): GPUDevice;
}

/** Where batches go: CPU bytes in wasm memory, a WebGPU device, TensorFlow.js tensors or jax-js arrays. */
export type LoaderTarget = 'cpu' | GPUDevice | GpuContext | TfNamespaceLike | JaxNamespace;

export interface LoaderOptions extends CommonLoaderOptions {
  /** Output size: a number for square images, or [height, width] (default 224). */
  size?: number | readonly [number, number];
  /**
   * 'cover' (default): Resize(shorter side) + CenterCrop, as torchvision's eval transform;
   * 'random-crop': RandomResizedCrop + RandomHorizontalFlip (torchvision's defaults), new crops
   * every epoch, the same again for the same seed; 'contain': fit inside, padded; 'stretch'.
   */
  transform?: LoaderTransform;
  /** 1 (gray), 3 (RGB, default) or 4 (RGBA). */
  channels?: 1 | 3 | 4;
  /** Decode threads (default the machine's cores); ignored with `pool`. */
  threads?: number;
  /** Decode on this pool (shared with other loaders; the loader does not close it). */
  pool?: DecodePool;
  /** Where batches go (default 'cpu'). */
  to?: LoaderTarget;
  /** GPU and tf.js: the image tensor's layout (default NCHW on the GPU, NHWC for tf.js). */
  layout?: TensorLayout;
  /** GPU and tf.js: per-channel mean and std on the 0..1 scale (default ImageNet's). */
  mean?: readonly number[];
  std?: readonly number[];
  /** GPU: false hands out the u8 NHWC batches as uploaded (GpuBatch), for your own preprocessing. */
  normalize?: boolean;
  /** tf.js: labels as class indices ('int', the default: int32 [n]) or one-hot float32 [n, classes]. */
  labels?: 'int' | 'one-hot';
  /** tf.js one-hot: the number of classes (default: the folder's classes). */
  classes?: number;
  /** Decode limits and filter (see ImageDecodeOptions). */
  decode?: Pick<ImageDecodeOptions, 'maxPixels' | 'filter' | 'reducedScale'>;
  /** Continue where `loader.state()` was taken (same source, seed and rank). */
  resumeFrom?: LoaderState;
}

export interface LoaderSettings extends CommonLoaderSettings {
  height: number;
  width: number;
  transform: LoaderTransform;
  channels: 1 | 3 | 4;
  threads: number;
  pool: DecodePool | undefined;
  to: LoaderTarget;
  layout: TensorLayout | undefined;
  mean: readonly number[] | undefined;
  std: readonly number[] | undefined;
  normalize: boolean;
  labels: 'int' | 'one-hot';
  classes: number | undefined;
  decode: Pick<ImageDecodeOptions, 'maxPixels' | 'filter' | 'reducedScale'>;
  resumeFrom: LoaderState | undefined;
}

const KNOWN = [
  ...COMMON_OPTIONS,
  'size',
  'transform',
  'channels',
  'threads',
  'pool',
  'to',
  'layout',
  'mean',
  'std',
  'normalize',
  'labels',
  'classes',
  'decode',
  'resumeFrom',
] as const;

/** The largest side the loader makes (the decoder's own limit is larger; this keeps batches sane). */
const MAX_SIDE = 8192;

export function checkLoaderOptions(options: LoaderOptions | undefined): LoaderSettings {
  const o = new OptionChecker('loader options', options, KNOWN);
  const [height, width] = checkSize(o);
  const channels = o.integer('channels', 3, 1, 4);
  if (channels === 2) o.fail('channels', '1, 3 or 4');
  const common = checkCommonOptions(o, { batchSize: 32, readConcurrency: 16 });
  if (common.batchSize * height * width * channels > MAX_BATCH_BYTES)
    o.fail('batchSize', 'a batch under 2 GiB (batchSize × height × width × channels)');
  const pool = o.raw('pool');
  if (pool !== undefined && (typeof pool !== 'object' || pool === null || typeof (pool as DecodePool).decodeInto !== 'function'))
    o.fail('pool', 'a DecodePool');
  return {
    ...common,
    height,
    width,
    transform: o.oneOf('transform', 'cover', ['cover', 'random-crop', 'contain', 'stretch']),
    channels: channels as 1 | 3 | 4,
    threads: o.integer('threads', hardwareConcurrency(), 1, 256),
    pool: pool as DecodePool | undefined,
    to: checkTarget(o),
    layout: o.raw('layout') === undefined ? undefined : o.oneOf<TensorLayout>('layout', 'NCHW', ['NCHW', 'NHWC']),
    mean: o.numbers('mean', channels),
    std: o.numbers('std', channels, 0),
    normalize: o.boolean('normalize', true),
    labels: o.oneOf('labels', 'int', ['int', 'one-hot']),
    classes: o.optionalInteger('classes', 2),
    decode: checkDecode(o),
    resumeFrom: checkState(o),
  };
}

function checkSize(o: OptionChecker): [number, number] {
  const size = o.raw('size') ?? 224;
  const side = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= MAX_SIDE;
  if (side(size)) return [size as number, size as number];
  if (Array.isArray(size) && size.length === 2 && side(size[0]) && side(size[1])) return [size[0] as number, size[1] as number];
  return o.fail('size', `a side in [1, ${MAX_SIDE}] or [height, width]`);
}

/** `to` when it is a GPUDevice or a GpuContext (what every loader's `to` takes for a GPU), else undefined. */
export function gpuTarget(to: unknown): GPUDevice | GpuContext | undefined {
  if (typeof to !== 'object' || to === null) return undefined;
  const t = to as Partial<GpuContext> & Partial<GPUDevice>;
  if (typeof t.createBuffer === 'function' && typeof t.queue === 'object') return to as GPUDevice;
  if (typeof t.device === 'object' && t.device !== null && typeof t.device.createBuffer === 'function') return to as GpuContext;
  return undefined;
}

/** Whether `to` is TensorFlow.js's namespace. */
export function isTfjs(to: unknown): to is TfNamespaceLike {
  const t = to as Partial<TfNamespaceLike> | undefined;
  return typeof t?.tensor === 'function' && typeof t.getBackend === 'function';
}

/** Whether `to` is jax-js's namespace. */
export function isJax(to: unknown): to is JaxNamespace {
  const t = to as Partial<JaxNamespace> | undefined;
  return typeof t?.numpy === 'object' && typeof t.defaultDevice === 'function';
}

function checkTarget(o: OptionChecker): LoaderTarget {
  const to = o.raw('to') ?? 'cpu';
  if (to === 'cpu') return to;
  const gpu = gpuTarget(to);
  if (gpu) return gpu;
  if (isTfjs(to) || isJax(to)) return to;
  return o.fail('to', "'cpu', a GPUDevice, a GpuContext (acquireGpu()), TensorFlow.js's namespace or jax-js's");
}

function checkDecode(o: OptionChecker): LoaderSettings['decode'] {
  const decode = new OptionChecker('loader options.decode', o.raw('decode'), ['maxPixels', 'filter', 'reducedScale']);
  const out: LoaderSettings['decode'] = {};
  const maxPixels = decode.optionalInteger('maxPixels', 1);
  if (maxPixels !== undefined) out.maxPixels = maxPixels;
  if (decode.raw('filter') !== undefined)
    out.filter = decode.oneOf('filter', 'bilinear', ['bilinear', 'bicubic', 'area', 'nearest', 'lanczos'] as const);
  if (decode.raw('reducedScale') !== undefined) out.reducedScale = decode.boolean('reducedScale', true);
  return out;
}

function checkState(o: OptionChecker): LoaderState | undefined {
  const v = o.raw('resumeFrom');
  if (v === undefined) return undefined;
  if (typeof v !== 'object' || v === null || (v as { kind?: unknown }).kind !== 'tandem.loader')
    o.fail('resumeFrom', 'a state from loader.state()');
  return v as LoaderState;
}
