// loader()'s options: every one checked when loader() is called, before anything is allocated,
// with an OptionError naming the field and the value; defaults are what a PyTorch or tf.data user
// expects. The result is the one settings object the loader reads.
import type { DecodePool, ImageDecodeOptions } from '../decode/index.ts';
import { OptionChecker } from '../errors/index.ts';
import type { GpuContext, TensorLayout } from '../gpu/index.ts';
import type { FailureBudget } from '../pipeline/index.ts';
import { hardwareConcurrency } from '../runtime/index.ts';
import type { FetchOptions } from '../sources/index.ts';
import type { LoaderState } from './state.ts';

/** How each image becomes `size`: torchvision's transforms, done inside the decode. */
export type LoaderTransform = 'cover' | 'random-crop' | 'contain' | 'stretch';

/** The parts of TensorFlow.js's namespace the loader looks for (the tf.js door checks the rest). */
export interface TfNamespaceLike {
  tensor: (...args: never[]) => unknown;
  getBackend: () => string;
}

/** Where batches go: CPU bytes in wasm memory, a WebGPU device, or TensorFlow.js tensors. */
export type LoaderTarget = 'cpu' | GPUDevice | GpuContext | TfNamespaceLike;

export interface LoaderOptions {
  /** Images per batch (default 32). The last batch of the run may be smaller. */
  batchSize?: number;
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
  /** Seeded shuffle per epoch (default false; list sources only). */
  shuffle?: boolean;
  /** Seed of the shuffle and the random crops (default 0). */
  seed?: number;
  /** Epochs one `for await` runs through (default 1); batches run across epoch boundaries. */
  epochs?: number;
  /** This process's rank and the number of ranks (default $RANK and $WORLD_SIZE, else 0 and 1). */
  rank?: number;
  worldSize?: number;
  /** Decode threads (default the machine's cores); ignored with `pool`. */
  threads?: number;
  /** Decode on this pool (shared with other loaders; the loader does not close it). */
  pool?: DecodePool;
  /** When the run stops for failed items (default: more than half failed, from 64 items on). */
  failureBudget?: FailureBudget;
  /** Files read at once (default 16). */
  readConcurrency?: number;
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
  /** Retries and time limits for URL sources. */
  fetch?: FetchOptions;
  /** Continue where `loader.state()` was taken (same source, seed and rank). */
  resumeFrom?: LoaderState;
  /** Stops the loader (as close() does). */
  signal?: AbortSignal;
  /** How the statistics name the loop that takes the batches (default 'consumer'; e.g. 'training loop'). */
  consumer?: string;
}

export interface LoaderSettings {
  batchSize: number;
  height: number;
  width: number;
  transform: LoaderTransform;
  channels: 1 | 3 | 4;
  shuffle: boolean;
  seed: number;
  epochs: number;
  rank: number | undefined;
  worldSize: number | undefined;
  threads: number;
  pool: DecodePool | undefined;
  failureBudget: FailureBudget;
  readConcurrency: number;
  to: LoaderTarget;
  layout: TensorLayout | undefined;
  mean: readonly number[] | undefined;
  std: readonly number[] | undefined;
  normalize: boolean;
  labels: 'int' | 'one-hot';
  classes: number | undefined;
  decode: Pick<ImageDecodeOptions, 'maxPixels' | 'filter' | 'reducedScale'>;
  fetch: FetchOptions;
  resumeFrom: LoaderState | undefined;
  signal: AbortSignal | undefined;
  consumer: string;
}

const KNOWN = [
  'batchSize',
  'size',
  'transform',
  'channels',
  'shuffle',
  'seed',
  'epochs',
  'rank',
  'worldSize',
  'threads',
  'pool',
  'failureBudget',
  'readConcurrency',
  'to',
  'layout',
  'mean',
  'std',
  'normalize',
  'labels',
  'classes',
  'decode',
  'fetch',
  'resumeFrom',
  'signal',
  'consumer',
] as const;

/** The largest side the loader makes (the decoder's own limit is larger; this keeps batches sane). */
const MAX_SIDE = 8192;

export function checkLoaderOptions(options: LoaderOptions | undefined): LoaderSettings {
  const o = new OptionChecker('loader options', options, KNOWN);
  const [height, width] = checkSize(o);
  const channels = o.integer('channels', 3, 1, 4);
  if (channels === 2) o.fail('channels', '1, 3 or 4');
  const worldSize = o.optionalInteger('worldSize', 1);
  const rank = o.optionalInteger('rank', 0, worldSize === undefined ? Number.MAX_SAFE_INTEGER : worldSize - 1);
  const pool = o.raw('pool');
  if (pool !== undefined && (typeof pool !== 'object' || pool === null || typeof (pool as DecodePool).decodeInto !== 'function'))
    o.fail('pool', 'a DecodePool');
  return {
    batchSize: o.integer('batchSize', 32, 1, 65536),
    height,
    width,
    transform: o.oneOf('transform', 'cover', ['cover', 'random-crop', 'contain', 'stretch']),
    channels: channels as 1 | 3 | 4,
    shuffle: o.boolean('shuffle', false),
    seed: o.integer('seed', 0, -0x80000000, 0x7fffffff),
    epochs: o.integer('epochs', 1),
    rank,
    worldSize,
    threads: o.integer('threads', hardwareConcurrency(), 1, 256),
    pool: pool as DecodePool | undefined,
    failureBudget: checkBudget(o),
    readConcurrency: o.integer('readConcurrency', 16, 1, 1024),
    to: checkTarget(o),
    layout: o.raw('layout') === undefined ? undefined : o.oneOf<TensorLayout>('layout', 'NCHW', ['NCHW', 'NHWC']),
    mean: o.numbers('mean', channels),
    std: o.numbers('std', channels, 0),
    normalize: o.boolean('normalize', true),
    labels: o.oneOf('labels', 'int', ['int', 'one-hot']),
    classes: o.optionalInteger('classes', 2),
    decode: checkDecode(o),
    fetch: plainObject(o, 'fetch') as FetchOptions,
    resumeFrom: checkState(o),
    signal: o.signal(),
    consumer: checkName(o, 'consumer', 'consumer'),
  };
}

function checkName(o: OptionChecker, field: string, fallback: string): string {
  const v = o.raw(field) ?? fallback;
  if (typeof v !== 'string' || v === '') o.fail(field, 'a non-empty string');
  return v;
}

function checkSize(o: OptionChecker): [number, number] {
  const size = o.raw('size') ?? 224;
  const side = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= MAX_SIDE;
  if (side(size)) return [size as number, size as number];
  if (Array.isArray(size) && size.length === 2 && side(size[0]) && side(size[1])) return [size[0] as number, size[1] as number];
  return o.fail('size', `a side in [1, ${MAX_SIDE}] or [height, width]`);
}

export function checkBudget(o: OptionChecker): FailureBudget {
  const budget = o.raw('failureBudget');
  if (budget === undefined) return { maxFailureRate: 0.5, minItems: 64 };
  const inner = new OptionChecker('loader options.failureBudget', budget, ['maxFailures', 'maxFailureRate', 'minItems']);
  const out: FailureBudget = {};
  const maxFailures = inner.optionalInteger('maxFailures', 0);
  if (maxFailures !== undefined) out.maxFailures = maxFailures;
  if (inner.raw('maxFailureRate') !== undefined) out.maxFailureRate = inner.number('maxFailureRate', 0, 0, 1);
  const minItems = inner.optionalInteger('minItems', 0);
  if (minItems !== undefined) out.minItems = minItems;
  return out;
}

/** `to` when it is a GPUDevice or a GpuContext (what every loader's `to` takes for a GPU), else undefined. */
export function gpuTarget(to: unknown): GPUDevice | GpuContext | undefined {
  if (typeof to !== 'object' || to === null) return undefined;
  const t = to as Partial<GpuContext> & Partial<GPUDevice>;
  if (typeof t.createBuffer === 'function' && typeof t.queue === 'object') return to as GPUDevice;
  if (typeof t.device === 'object' && t.device !== null && typeof t.device.createBuffer === 'function') return to as GpuContext;
  return undefined;
}

function checkTarget(o: OptionChecker): LoaderTarget {
  const to = o.raw('to') ?? 'cpu';
  if (to === 'cpu') return to;
  const gpu = gpuTarget(to);
  if (gpu) return gpu;
  const t = to as Partial<TfNamespaceLike>;
  if (typeof t.tensor === 'function' && typeof t.getBackend === 'function') return to as TfNamespaceLike;
  return o.fail('to', "'cpu', a GPUDevice, a GpuContext (acquireGpu()) or TensorFlow.js's namespace");
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

function plainObject(o: OptionChecker, field: string): object {
  const v = o.raw(field);
  if (v === undefined) return {};
  if (typeof v !== 'object' || v === null || Array.isArray(v)) o.fail(field, 'an object');
  return v;
}

function checkState(o: OptionChecker): LoaderState | undefined {
  const v = o.raw('resumeFrom');
  if (v === undefined) return undefined;
  if (typeof v !== 'object' || v === null || (v as { kind?: unknown }).kind !== 'tandem.loader')
    o.fail('resumeFrom', 'a state from loader.state()');
  return v as LoaderState;
}
