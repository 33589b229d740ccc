// How Tandem's GPU buffers reach jax-js. jax-js 0.1.25 cannot take a GPUBuffer as an array: an
// Array is built from a backend slot, and neither the backends nor their slot maps are exported,
// so there is no zero-copy wrap (docs/frameworks.md). It does expose its device
// (getWebGPUDevice) and each array's buffer (Array.gpuBuffer), so when Tandem runs on jax-js's
// device a batch crosses as one copyBufferToBuffer per buffer into arrays jax-js allocated: GPU to
// GPU, no readback, one command buffer.
import type * as jaxjs from '@jax-js/jax';
import { FeedError, GpuError } from '../gpu/index.ts';

/** What Tandem uses of jax-js's namespace (`import * as jax from '@jax-js/jax'`). */
export type Jax = Pick<typeof jaxjs, 'numpy' | 'getWebGPUDevice' | 'defaultDevice'>;
export type JaxArray = jaxjs.Array;
/** A jax-js backend name: 'cpu', 'wasm', 'webgpu' or 'webgl'. */
export type JaxDevice = jaxjs.Device;

/** One Tandem buffer and the jax-js array its first `prod(shape)` elements become. */
export interface GpuPiece {
  readonly name: string;
  readonly source: GPUBuffer;
  readonly shape: readonly number[];
  readonly dtype: 'int32' | 'float32';
}

const ELEMENT_BYTES = 4; // int32 and float32 alike
const COPY_SRC = 0x0004; // GPUBufferUsage.COPY_SRC, written out: Node has no GPUBufferUsage global without dawn's globals

/** jax-js's WebGPU device, or a FeedError saying how to start that backend. */
export function jaxWebGpuDevice(jax: Jax, door: string): GPUDevice {
  try {
    return jax.getWebGPUDevice();
  } catch {
    throw new FeedError(
      'no-webgpu-backend',
      `${door}: jax-js's WebGPU backend is not started (await jax.init('webgpu') first). A batch in GPU buffers needs it, and Tandem on its device: acquireGpu({ device: jax.getWebGPUDevice() }); without one, take the loader's CPU batches`,
    );
  }
}

/** Sizes and usage checked before jax-js allocates anything. */
export function checkPieces(pieces: readonly GpuPiece[], door: string): void {
  for (const p of pieces) {
    const bytes = elements(p.shape) * ELEMENT_BYTES;
    if (p.source.size < bytes)
      throw new FeedError(
        'shape-mismatch',
        `${door}: ${p.name} holds ${p.source.size} bytes; [${p.shape.join(', ')}] ${p.dtype} needs ${bytes}`,
      );
    if ((p.source.usage & COPY_SRC) === 0) throw new FeedError('shape-mismatch', `${door}: ${p.name} was not made with COPY_SRC usage`);
  }
}

/**
 * New jax-js arrays on its 'webgpu' backend holding a copy of each piece. The copy is submitted
 * before this resolves, so the Tandem buffers may be released (refilled) right after: later queue
 * work cannot overtake it. A buffer of another device is a GpuError('device-mismatch').
 */
export async function copyIntoJax(jax: Jax, device: GPUDevice, pieces: readonly GpuPiece[], door: string): Promise<JaxArray[]> {
  const np = jax.numpy;
  const arrays = pieces.map((p) => np.zeros([...p.shape], { dtype: p.dtype === 'int32' ? np.int32 : np.float32, device: 'webgpu' }));
  try {
    // gpuBuffer() consumes a reference (it disposes the array it is called on): keep ours with .ref.
    // It realises the array first, so the buffer is this array's alone and its fill is already submitted.
    const targets = await Promise.all(arrays.map((a) => a.ref.gpuBuffer()));
    device.pushErrorScope('validation');
    const encoder = device.createCommandEncoder({ label: `${door} copy into jax-js` });
    for (const [i, p] of pieces.entries()) {
      const bytes = elements(p.shape) * ELEMENT_BYTES;
      const target = targets[i];
      if (target && bytes > 0) encoder.copyBufferToBuffer(p.source, 0, target, 0, bytes);
    }
    device.queue.submit([encoder.finish()]);
    const error = await device.popErrorScope();
    if (error)
      throw new GpuError(
        'device-mismatch',
        `${door}: copying the batch into jax-js's device failed (${error.message}). The batch's buffers must be on jax-js's WebGPU device: build Tandem on it with acquireGpu({ device: jax.getWebGPUDevice() })`,
      );
    return arrays;
  } catch (error) {
    for (const a of arrays) if (a.refCount > 0) a.dispose();
    throw error;
  }
}

export function elements(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}
