// The text loader's batches as jax-js int32 arrays. The batch shapes are declared here by
// structure (src/text sits above this folder): a TokenBatch and a TokenDeviceBatch of
// tandem's text loader satisfy them.
import { OptionChecker, OptionError } from '../errors/index.ts';
import { FeedError } from '../gpu/index.ts';
import { writeBufferTakesSharedMemory } from '../runtime/index.ts';
import { checkPieces, copyIntoJax, jaxWebGpuDevice, type GpuPiece, type Jax, type JaxArray, type JaxDevice } from './copy.ts';

const DOOR = 'tandem/jax';
const FIELDS = ['inputs', 'labels', 'docIds', 'positions'] as const;
const DEVICES: readonly JaxDevice[] = ['cpu', 'wasm', 'webgpu', 'webgl'];

/**
 * A packed text batch whose four arrays are `T`s (Int32Array on the CPU, GPUBuffer on the GPU, a
 * framework's tensor), each `batchSize × seqLen` i32, row-major: what jaxTokens reads, and what
 * the text loader's batches are made of.
 */
export interface TokenArrays<T> {
  readonly inputs: T;
  readonly labels: T;
  readonly docIds: T;
  readonly positions: T;
  readonly count: number;
  /** `[batchSize, seqLen]`. */
  readonly shape: readonly [number, number];
  readonly keys: readonly string[];
  release(): void;
}

/** What jaxTokens reads of a text batch in CPU memory (the text loader's TokenBatch). */
export type HostTokenBatch = TokenArrays<Int32Array>;

/** What jaxTokens reads of a text batch in GPU buffers (the text loader's TokenDeviceBatch): i32, COPY_SRC. */
export type DeviceTokenBatch = TokenArrays<GPUBuffer>;

export interface JaxTokensOptions {
  /**
   * The jax-js backend that a CPU batch goes to (default: jax-js's default, `jax.defaultDevice()`).
   * A GPU batch always goes to 'webgpu'.
   */
  device?: JaxDevice;
  /** Release the Tandem batch once its values are in jax-js (default true; also when the call fails). */
  release?: boolean;
}

/**
 * The batch's `count` filled rows as jax-js int32 arrays of shape [count, seqLen]; padding rows
 * past `count` are dropped. The caller owns one reference to each array (jax-js's rules).
 */
export interface JaxTokens {
  inputs: JaxArray;
  labels: JaxArray;
  docIds: JaxArray;
  positions: JaxArray;
  count: number;
  seqLen: number;
  keys: readonly string[];
  /** 'cpu': the typed arrays were copied once into jax-js; 'gpu': one GPU→GPU copy on jax-js's device. */
  path: 'cpu' | 'gpu';
}

/**
 * A text batch as jax-js arrays. A CPU batch is copied once into jax-js's memory for `device`
 * (wasm memory, a CPU buffer, or a GPU buffer by writeBuffer); a GPU batch, whose buffers must be
 * on jax-js's WebGPU device, is copied GPU to GPU there. Either way the arrays share nothing with
 * the batch, so it is released (and may be refilled) as soon as this resolves.
 */
export async function jaxTokens(jax: Jax, batch: HostTokenBatch | DeviceTokenBatch, options: JaxTokensOptions = {}): Promise<JaxTokens> {
  const o = new OptionChecker('jaxTokens options', options, ['device', 'release']);
  const release = o.boolean('release', true);
  const device = o.raw('device') === undefined ? undefined : o.oneOf('device', 'wasm', DEVICES);
  try {
    const [rows, seqLen] = checkShape(batch);
    const count = batch.count;
    const shape = [count, seqLen];
    let arrays: JaxArray[];
    let path: JaxTokens['path'];
    if (batch.inputs instanceof Int32Array) {
      const host = batch as HostTokenBatch;
      const target = device ?? jax.defaultDevice();
      if (target === 'webgpu') jaxWebGpuDevice(jax, DOOR); // a typed error before jax-js's own
      for (const field of FIELDS) checkHostArray(host[field], field, rows * seqLen); // all four before jax-js allocates
      arrays = FIELDS.map((field) => hostArray(jax, host[field], [count, seqLen], target));
      path = 'cpu';
    } else {
      if (device !== undefined && device !== 'webgpu')
        throw new OptionError('jaxTokens options', 'device', device, "'webgpu' or nothing, for a batch in GPU buffers");
      const gpu = batch as DeviceTokenBatch;
      const pieces: GpuPiece[] = FIELDS.map((field) => ({ name: field, source: gpu[field], shape, dtype: 'int32' }));
      checkPieces(pieces, DOOR);
      arrays = await copyIntoJax(jax, jaxWebGpuDevice(jax, DOOR), pieces, DOOR);
      path = 'gpu';
    }
    const [inputs, labels, docIds, positions] = arrays as [JaxArray, JaxArray, JaxArray, JaxArray];
    return { inputs, labels, docIds, positions, count, seqLen, keys: [...batch.keys], path };
  } finally {
    if (release) batch.release();
  }
}

function checkShape(batch: HostTokenBatch | DeviceTokenBatch): [number, number] {
  const shape: unknown = batch.shape;
  const [rows, seqLen] = Array.isArray(shape) && shape.length === 2 ? (shape as unknown[]) : [];
  const whole = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
  if (!whole(rows) || !whole(seqLen))
    throw new FeedError('shape-mismatch', `${DOOR}: a text batch's shape is [batchSize, seqLen], not ${JSON.stringify(shape)}`);
  if (!whole(batch.count) || batch.count > rows)
    throw new FeedError('shape-mismatch', `${DOOR}: count ${batch.count} is not a row count of a [${rows}, ${seqLen}] batch`);
  return [rows, seqLen];
}

function checkHostArray(values: Int32Array, field: string, full: number): void {
  if (!(values instanceof Int32Array) || values.length < full)
    throw new FeedError('shape-mismatch', `${DOOR}: ${field} should be an Int32Array of ${full} values, is ${describe(values)}`);
}

function hostArray(jax: Jax, values: Int32Array, shape: [number, number], target: JaxDevice): JaxArray {
  const [count, seqLen] = shape;
  const np = jax.numpy;
  // jax-js reads an empty typed array's first value as the fill of a constant: no values, no read.
  if (count * seqLen === 0) return np.zeros(shape, { dtype: np.int32, device: target });
  let filled = values.subarray(0, count * seqLen);
  // jax-js's WebGPU backend hands the view to writeBuffer, which dawn.node refuses on shared memory.
  if (target === 'webgpu' && !writeBufferTakesSharedMemory && !(filled.buffer instanceof ArrayBuffer)) filled = filled.slice();
  return np.array(filled, { shape, dtype: np.int32, device: target });
}

function describe(values: unknown): string {
  if (ArrayBuffer.isView(values)) return `a ${values.constructor.name} of ${(values as Int32Array).length}`;
  return typeof values;
}
