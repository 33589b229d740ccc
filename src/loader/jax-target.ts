// `to: jax` for the image loader: the GPU road on jax-js's own WebGPU device (jax-js cannot take
// another device's buffers), then each normalised batch copied GPU→GPU into jax-js arrays through
// the `tandem/jax` door, loaded only for this target. The device batch goes back to the ring once
// the copy is submitted; the arrays are the caller's, as jax-js arrays are.
import { OptionError } from '../errors/index.ts';
import { acquireGpu, type GpuContext } from '../gpu/index.ts';
import type { Jax, JaxArray } from '../jax/index.ts';
import type { StageContext } from '../pipeline/index.ts';
import { type BatchEnds, leasedBatch } from '../sync/index.ts';
import type { ImageBatch } from '../decode/index.ts';
import type { DeviceBatch } from './gpu-ring.ts';
import type { JaxNamespace } from './options.ts';

/** A batch as jax-js arrays: float32 images in the loader's layout, int32 labels [count]. */
export interface JaxImageBatch extends BatchEnds {
  readonly images: JaxArray;
  readonly labels: JaxArray;
  readonly count: number;
  readonly keys: readonly string[];
}

/**
 * jax-js's WebGPU device, adopted (never destroyed: jax-js made it and keeps it); the arrays are
 * made on it whichever device is jax-js's default.
 */
export async function jaxGpu(jax: JaxNamespace): Promise<GpuContext> {
  let device: GPUDevice;
  try {
    device = jax.getWebGPUDevice();
  } catch {
    throw new OptionError(
      'loader options',
      'to',
      'jax-js without its WebGPU backend',
      "jax-js with its WebGPU backend started (await jax.init('webgpu')): image batches are normalised on the GPU",
    );
  }
  return acquireGpu({ device });
}

/** Marks a jax-js batch handed to the consumer: from then on its arrays are the caller's. */
const HANDED_OUT = Symbol('tandem jax batch handed out');

/** Called by the loader as the consumer takes `batch`; nothing for batches of other targets. */
export function handOut(batch: object): void {
  (batch as { [HANDED_OUT]?: () => void })[HANDED_OUT]?.();
}

/**
 * The stage after the GPU ring's: its DeviceBatch as jax-js arrays. A batch the consumer never
 * took (the pass stopped with it queued) has its arrays disposed when the engine drops it; one it
 * took keeps them, as jax-js arrays are the caller's to dispose or consume.
 */
export function jaxImagesStage(
  jax: JaxNamespace,
  toDevice: (batch: ImageBatch, ctx: StageContext) => Promise<DeviceBatch>,
): (batch: ImageBatch, ctx: StageContext) => Promise<JaxImageBatch> {
  return async (batch, ctx) => {
    const { jaxImages } = await import('../jax/index.ts');
    const { images, labels, count, keys } = await jaxImages(jax as unknown as Jax, await toDevice(batch, ctx));
    let handedOut = false;
    const dropped = () => {
      if (handedOut) return;
      for (const a of [images, labels]) if (a.refCount > 0) a.dispose();
    };
    const out = leasedBatch('a jax-js image batch', dropped, { images, labels }, { count, keys });
    Object.defineProperty(out, HANDED_OUT, { value: () => (handedOut = true) });
    return out;
  };
}
