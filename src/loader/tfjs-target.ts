// `to: tf`, for every loader: image batches become TensorFlow.js tensors through the tf.js door's
// feeder, loaded only when a loader is given tf.js's namespace, so the core never pulls the door
// (or tf.js) in; on tf.js's WebGPU backend the feeder adopts tf.js's device and no byte passes
// through the CPU. Token rows are small, so their int32 tensors are made from the CPU arrays on
// any backend (tf.js uploads them when a kernel first reads them). Either way release() disposes
// the batch's tensors.
import type { ImageBatch, VideoClipBatch } from '../decode/index.ts';
import type { HostBatch, TensorLayout } from '../gpu/index.ts';
import type { StageContext } from '../pipeline/index.ts';
import { leasedBatch, type BatchEnds } from '../sync/index.ts';
import type { Tf, TfjsBatch } from '../tfjs/index.ts';
import type { TfNamespaceLike } from './options.ts';

/** tf.js tensors of one batch: `xs` (float32 images) and `ys` (labels); release() disposes both. */
export interface TensorBatch extends TfjsBatch, BatchEnds {
  readonly count: number;
}

export interface TfjsTargetOptions {
  batchSize: number;
  height: number;
  width: number;
  channels: 1 | 3 | 4;
  layout: TensorLayout | undefined;
  mean: readonly number[] | undefined;
  std: readonly number[] | undefined;
  labels: 'int' | 'one-hot';
  classes: number;
}

/** `tensors`, each read through the batch's lease, and `plain`; release() disposes the tensors. */
function tensorBatch<G extends Record<string, { dispose(): void }>, P extends object>(tensors: G, plain: P): Readonly<G> & P & BatchEnds {
  return leasedBatch(
    'a tf.js batch',
    () => {
      for (const t of Object.values(tensors)) t.dispose();
    },
    tensors,
    plain,
  );
}

export async function openTfjsTarget(
  to: TfNamespaceLike,
  o: TfjsTargetOptions,
): Promise<{
  convert: (batch: ImageBatch, ctx: StageContext) => Promise<TensorBatch>;
  close: () => Promise<void>;
  path: 'webgpu' | 'cpu';
}> {
  const { TfjsFeeder } = await import('../tfjs/index.ts');
  const feeder = await TfjsFeeder.create(to as unknown as Tf, {
    batchSize: o.batchSize,
    height: o.height,
    width: o.width,
    channels: o.channels,
    labels: o.labels,
    ...(o.labels === 'one-hot' ? { classes: o.classes } : {}),
    ...(o.layout ? { layout: o.layout } : {}),
    ...(o.mean ? { mean: o.mean } : {}),
    ...(o.std ? { std: o.std } : {}),
  });
  const convert = async (batch: ImageBatch): Promise<TensorBatch> => {
    const count = batch.count;
    const { xs, ys, keys } = await feeder.tensors(batch);
    return tensorBatch({ xs, ys }, { keys, count });
  };
  return { convert, close: () => feeder.close(), path: feeder.path };
}

/** Each of `arrays` as an int32 tensor of `shape` (a copy: `host` is released at once, also when this fails). */
export function tfjsInt32<K extends string, P extends object>(
  to: TfNamespaceLike,
  host: { release(): void },
  arrays: Record<K, Int32Array>,
  shape: readonly number[],
  plain: P,
): Readonly<Record<K, unknown>> & P & BatchEnds {
  try {
    const tf = to as unknown as Tf;
    const tensor = (a: Int32Array): { dispose(): void } => tf.tensor(a.slice(), [...shape], 'int32');
    const tensors = Object.fromEntries(Object.entries<Int32Array>(arrays).map(([k, a]) => [k, tensor(a)]));
    return tensorBatch(tensors as Record<K, { dispose(): void }>, plain);
  } finally {
    host.release();
  }
}

/** tf.js tensors of one clip batch: `xs` float32 [count, frames, H, W, 3], `ys` int32 [count]; release() disposes both. */
export interface ClipTensorBatch extends BatchEnds {
  readonly xs: Tensor;
  readonly ys: Tensor;
  readonly count: number;
  readonly keys: readonly string[];
  /** Each slot's frame time (s), count × frames, as the CPU clip batch had them. */
  readonly frameTimes: Float64Array;
}

type Tensor = TfjsBatch['ys'];

/**
 * `to: tf` for the video loader: a clip batch is `count × frames` images of one size, so the image
 * feeder normalises them as one batch (in WGSL on tf.js's WebGPU device, else on the CPU) and the
 * result is reshaped to [count, frames, H, W, 3]; the labels are the clips'.
 */
export async function openTfjsClipTarget(
  to: TfNamespaceLike,
  o: { batchSize: number; frames: number; height: number; width: number; mean: readonly number[]; std: readonly number[] },
): Promise<{ convert: (clips: VideoClipBatch) => Promise<ClipTensorBatch>; close: () => Promise<void>; path: 'webgpu' | 'cpu' }> {
  const { TfjsFeeder } = await import('../tfjs/index.ts');
  const tf = to as unknown as Tf;
  const { frames, height, width } = o;
  const feeder = await TfjsFeeder.create(tf, {
    batchSize: o.batchSize * frames,
    height,
    width,
    channels: 3,
    layout: 'NHWC',
    mean: o.mean,
    std: o.std,
  });
  const convert = async (clips: VideoClipBatch): Promise<ClipTensorBatch> => {
    const { count, sequence } = clips;
    const rows = count * frames;
    const keys = [...clips.keys];
    const frameTimes = clips.frameTimes.slice();
    const labels = clips.labels.slice();
    // The clips' bytes as `rows` images; the feeder releases the clip batch once they are read.
    const asImages: HostBatch = {
      sequence,
      count: rows,
      shape: [rows, height, width, 3],
      data: clips.data,
      labels: new Int32Array(rows),
      keys: [],
      release: () => clips.release(),
    };
    const images = await feeder.tensors(asImages);
    images.ys.dispose();
    const xs = tf.reshape(images.xs, [count, frames, height, width, 3]) as Tensor;
    images.xs.dispose();
    return tensorBatch({ xs, ys: tf.tensor1d(labels, 'int32') as Tensor }, { keys, count, frameTimes });
  };
  return { convert, close: () => feeder.close(), path: feeder.path };
}
