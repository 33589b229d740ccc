import { adapterHint, getGpu, runtimeName } from '../runtime/index.ts';

export interface GpuContext {
  adapter: GPUAdapter;
  device: GPUDevice;
  /** The largest storage binding this device accepts (lavapipe: 128 MiB); split larger data. */
  maxStorageBinding: number;
  runtime: string;
  /** Destroys the device; buffers created on it become invalid. */
  close(): void;
}

// dawn.node tears its instance down when the GPU object is collected, even with devices alive;
// each context holds its own reference until close (never a global one, or Node cannot exit).
const instances = new WeakMap<GPUDevice, GPU>();

export interface AcquireOptions {
  powerPreference?: GPUPowerPreference;
  /** Optional features to enable where the adapter has them (e.g. 'timestamp-query' for profiling). */
  features?: GPUFeatureName[];
}

/** Gets a WebGPU device in the browser, Deno or Node with the adapter's full buffer limits. */
export async function acquireGpu(options: AcquireOptions = {}): Promise<GpuContext> {
  const gpu = await getGpu();
  const adapter = await gpu.requestAdapter({ powerPreference: options.powerPreference ?? 'high-performance' });
  if (!adapter) throw new Error(`tandem gpu (${runtimeName}): no WebGPU adapter. ${adapterHint()}`);
  const limits = adapter.limits;
  const device = await adapter.requestDevice({
    requiredFeatures: (options.features ?? []).filter((f) => adapter.features.has(f)),
    requiredLimits: {
      maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
      maxBufferSize: limits.maxBufferSize,
      maxComputeWorkgroupStorageSize: limits.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: limits.maxComputeInvocationsPerWorkgroup,
    },
  });
  instances.set(device, gpu);
  const info = adapter.info;
  return {
    adapter,
    device,
    maxStorageBinding: device.limits.maxStorageBufferBindingSize,
    runtime: `${runtimeName}: ${info?.vendor ?? ''} ${info?.architecture ?? ''} ${info?.description ?? ''}`.replace(/\s+/g, ' ').trim(),
    close: () => {
      device.destroy();
      instances.delete(device);
    },
  };
}

/**
 * Whether the device runs on the CPU (lavapipe/llvmpipe, SwiftShader, WARP): kernels that suit
 * SIMD lanes over cached memory better than workgroup-memory tiling pick their variant by this.
 */
export function onCpuAdapter(device: GPUDevice): boolean {
  const info = (device as GPUDevice & { adapterInfo?: GPUAdapterInfo & { isFallbackAdapter?: boolean } }).adapterInfo;
  if (!info) return false;
  return (
    info.isFallbackAdapter === true ||
    /llvmpipe|lavapipe|swiftshader|microsoft basic render|\bcpu\b/i.test(`${info.description} ${info.device} ${info.architecture}`)
  );
}

/** Copies a GPU buffer back to the CPU (tests and checks; never on the training hot path). */
export async function readBuffer(device: GPUDevice, source: GPUBuffer, bytes = source.size, offset = 0): Promise<ArrayBuffer> {
  const staging = device.createBuffer({ size: bytes, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(source, offset, staging, 0, bytes);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const copy = staging.getMappedRange().slice(0);
  staging.unmap();
  staging.destroy();
  return copy;
}
