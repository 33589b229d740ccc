// The image loader's GPU batches (`to: 'gpu'`, DeviceBatch) as jax-js arrays, declared here by
// structure (src/loader sits above this folder). Its CPU batches are u8 pixels, a type jax-js
// does not have, so they are not converted here: normalise on the GPU first.
import { OptionChecker } from '../errors/index.ts';
import { FeedError } from '../gpu/index.ts';
import { checkPieces, copyIntoJax, jaxWebGpuDevice, type GpuPiece, type Jax, type JaxArray } from './copy.ts';

const DOOR = 'tandem/jax';

/** What jaxImages reads of the loader's DeviceBatch. */
export interface DeviceImageBatch {
  readonly count: number;
  /** [count, C, H, W] or [count, H, W, C]. */
  readonly shape: readonly [number, number, number, number];
  /** f32, at least count × C × H × W values; COPY_SRC. */
  readonly images: GPUBuffer;
  /** i32, at least `count` values; COPY_SRC. */
  readonly labelBuffer: GPUBuffer;
  readonly keys: readonly string[];
  release(): void;
}

export interface JaxImages {
  /** float32, the batch's shape ([count, …]). */
  images: JaxArray;
  /** int32 [count]. */
  labels: JaxArray;
  count: number;
  keys: readonly string[];
}

/**
 * A normalised image batch as jax-js arrays: one GPU→GPU copy on jax-js's WebGPU device, which the
 * batch's buffers must be on. The batch is released once the copy is submitted (unless `release: false`).
 */
export async function jaxImages(jax: Jax, batch: DeviceImageBatch, options: { release?: boolean } = {}): Promise<JaxImages> {
  const release = new OptionChecker('jaxImages options', options, ['release']).boolean('release', true);
  try {
    const shape = batch.shape as readonly unknown[];
    const count = batch.count;
    const whole = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
    if (!Array.isArray(shape) || shape.length !== 4 || !shape.every(whole) || shape[0] !== count)
      throw new FeedError(
        'shape-mismatch',
        `${DOOR}: an image batch's shape is [count, …3 dims] with count ${count}, not ${JSON.stringify(shape)}`,
      );
    const pieces: GpuPiece[] = [
      { name: 'images', source: batch.images, shape: batch.shape, dtype: 'float32' },
      { name: 'labelBuffer', source: batch.labelBuffer, shape: [count], dtype: 'int32' },
    ];
    checkPieces(pieces, DOOR);
    const [images, labels] = (await copyIntoJax(jax, jaxWebGpuDevice(jax, DOOR), pieces, DOOR)) as [JaxArray, JaxArray];
    return { images, labels, count, keys: [...batch.keys] };
  } finally {
    if (release) batch.release();
  }
}
