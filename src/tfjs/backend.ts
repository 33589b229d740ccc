import type * as tfc from '@tensorflow/tfjs-core';
import { FeedError, type GpuContext } from '../gpu/index.ts';
import { assertSameDevice, gpuInstanceOf } from '../gpu/internal.ts';
import { withNavigatorGpu } from '../runtime/index.ts';

/** TensorFlow.js's core namespace, as `import * as tf from '@tensorflow/tfjs-core'` (or '@tensorflow/tfjs') gives it. */
export type Tf = typeof tfc;

/** `WebGPUBackend` from '@tensorflow/tfjs-backend-webgpu' (passed in: Tandem never imports a framework). */
export type WebGpuBackendClass = new (device: GPUDevice, adapterInfo?: GPUAdapterInfo) => tfc.KernelBackend;

/**
 * Makes TensorFlow.js's 'webgpu' backend run on Tandem's device, so tensors can be made from
 * Tandem's GPU buffers without a trip through the CPU. The backend tf.js registered for itself
 * (with its own device) is removed first: tensors it held are gone, so call this before making
 * any. Tandem's device stays Tandem's: disposing the backend does not destroy it, closing the
 * GpuContext does (when Tandem created it).
 */
export async function useDeviceForTfjs(tf: Tf, WebGPUBackend: WebGpuBackendClass, gpu: GpuContext): Promise<void> {
  // Only backends already made are looked at: findBackend or getBackend would start tf.js's own
  // factory, which makes a second device and, finishing later, would replace the backend below.
  if (deviceOf(tf.engine().registry.webgpu) === gpu.device) {
    await tf.setBackend('webgpu');
    return;
  }
  if (tf.findBackendFactory('webgpu')) tf.removeBackend('webgpu');
  const info = gpu.adapter?.info ?? (gpu.device as GPUDevice & { adapterInfo?: GPUAdapterInfo }).adapterInfo;
  tf.registerBackend('webgpu', () => new WebGPUBackend(gpu.device, info), 3);
  // Node 20 has no navigator; the backend's constructor looks for navigator.gpu before using the device.
  const ok = await withNavigatorGpu(gpuInstanceOf(gpu.device) ?? {}, () => tf.setBackend('webgpu'));
  if (!ok) throw new FeedError('no-webgpu-backend', "tandem/tfjs: TensorFlow.js could not start its 'webgpu' backend on Tandem's device");
  assertSameDevice(gpu.device, deviceOf(tf.engine().registry.webgpu) ?? gpu.device, "TensorFlow.js's WebGPU backend");
}

/**
 * The device of TensorFlow.js's current backend when it is WebGPU (to give to
 * acquireGpu({ device })), else undefined. Waits for tf.js to finish choosing its backend.
 */
export async function tfjsDevice(tf: Tf): Promise<GPUDevice | undefined> {
  await tf.ready();
  return tf.getBackend() === 'webgpu' ? deviceOf(tf.findBackend('webgpu')) : undefined;
}

function deviceOf(backend: tfc.KernelBackend | null | undefined): GPUDevice | undefined {
  return (backend as (tfc.KernelBackend & { device?: GPUDevice }) | null | undefined)?.device;
}
