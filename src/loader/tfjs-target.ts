// `to: tf`: batches become TensorFlow.js tensors through the tf.js door's feeder, loaded only when
// a loader is given tf.js's namespace, so the core never pulls the door (or tf.js) in. On tf.js's
// WebGPU backend the feeder adopts tf.js's device and no byte passes through the CPU.
import type { ImageBatch } from '../decode/index.ts';
import { BatchReleasedError } from '../errors/index.ts';
import type { TensorLayout } from '../gpu/index.ts';
import type { StageContext } from '../pipeline/index.ts';
import type { Tf, TfjsBatch } from '../tfjs/index.ts';
import type { TfNamespaceLike } from './options.ts';

/** tf.js tensors of one batch: `xs` (float32 images) and `ys` (labels); release() disposes both. */
export interface TensorBatch extends TfjsBatch {
  readonly count: number;
  release(): void;
  [Symbol.dispose](): void;
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

export async function openTfjsTarget(
  to: TfNamespaceLike,
  o: TfjsTargetOptions,
): Promise<{
  convert: (batch: ImageBatch, ctx: StageContext) => Promise<TensorBatch>;
  close: () => Promise<void>;
  path: 'webgpu' | 'cpu';
}> {
  const tf = to as unknown as Tf;
  const { TfjsFeeder } = await import('../tfjs/index.ts');
  const feeder = await TfjsFeeder.create(tf, {
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
    let released = false;
    const release = () => {
      if (released) throw new BatchReleasedError('a loader batch was released twice');
      released = true;
      tf.dispose([xs, ys]);
    };
    return {
      xs,
      ys,
      keys,
      count,
      release,
      [Symbol.dispose]: () => {
        if (!released) release();
      },
    };
  };
  return { convert, close: () => feeder.close(), path: feeder.path };
}
