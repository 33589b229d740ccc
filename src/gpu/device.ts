import { CodedError, OptionChecker } from '../errors/index.ts';
import { adapterHint, getGpu, runtimeName } from '../runtime/index.ts';

export type GpuErrorCode = 'no-adapter' | 'device-limits' | 'device-mismatch' | 'device-lost';

/** A GPU device that cannot serve a request: none found, too small, another device's buffer, lost. */
export class GpuError extends CodedError<GpuErrorCode> {
  override readonly name = 'GpuError';
}

export interface GpuContext {
  adapter: GPUAdapter | undefined;
  device: GPUDevice;
  /** The largest storage binding this device accepts (lavapipe: 128 MiB); split larger data. */
  maxStorageBinding: number;
  runtime: string;
  /**
   * Whether Tandem created the device. An owned device is destroyed by close(); a device Tandem
   * was given (`acquireGpu({ device })`) belongs to whoever made it, and close() leaves it alone.
   */
  readonly owned: boolean;
  /** Settles when the device is lost or destroyed, whoever destroyed it (the same promise both sides see). */
  readonly lost: Promise<GPUDeviceLostInfo>;
  /** Ends Tandem's use of the device: destroys it if Tandem owns it; buffers made on it become invalid. */
  close(): void;
  /** `using gpu = await acquireGpu()`: close() at the end of the scope. */
  [Symbol.dispose](): void;
}

// dawn.node tears its instance down when the GPU object is collected, even with devices alive;
// each context holds its own reference until close (never a global one, or Node cannot exit).
const instances = new WeakMap<GPUDevice, GPU>();

export interface AcquireOptions {
  powerPreference?: GPUPowerPreference;
  /** Optional features to enable where the adapter has them (e.g. 'timestamp-query' for profiling). */
  features?: GPUFeatureName[];
  /**
   * Run on this device instead of creating one: a framework's (ONNX Runtime Web's
   * `env.webgpu.device`, TensorFlow.js's backend device) or the page's own. Tandem checks that it
   * can serve Tandem's kernels and never destroys it.
   */
  device?: GPUDevice;
}

/**
 * The adapter limits Tandem raises to the adapter's maximum, a superset of what TensorFlow.js's
 * WebGPU backend asks for, so one device serves Tandem and a framework built on it alike.
 */
const RAISED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
] as const;

/** What Tandem's own kernels need of a device (normalize, augment, the ViT): WebGPU's defaults. */
const NEEDED_LIMITS: Partial<Record<(typeof RAISED_LIMITS)[number], number>> = {
  maxComputeInvocationsPerWorkgroup: 256,
  maxComputeWorkgroupSizeX: 256,
  maxComputeWorkgroupStorageSize: 16384,
};

/** Gets a WebGPU device in the browser, Deno or Node with the adapter's full buffer limits, or adopts `options.device`. */
export async function acquireGpu(options: AcquireOptions = {}): Promise<GpuContext> {
  const o = new OptionChecker('acquireGpu options', options, ['powerPreference', 'features', 'device']);
  if (o.raw('powerPreference') !== undefined) o.oneOf('powerPreference', 'high-performance', ['high-performance', 'low-power']);
  if (o.raw('features') !== undefined && !Array.isArray(o.raw('features'))) o.fail('features', 'an array of feature names');
  const given = o.raw('device');
  if (given !== undefined && (typeof given !== 'object' || given === null || typeof (given as GPUDevice).createBuffer !== 'function'))
    o.fail('device', 'a GPUDevice');
  if (options.device) return adoptDevice(options.device);
  const gpu = await getGpu();
  const adapter = await gpu.requestAdapter({ powerPreference: options.powerPreference ?? 'high-performance' });
  if (!adapter) throw new GpuError('no-adapter', `tandem gpu (${runtimeName}): no WebGPU adapter. ${adapterHint()}`);
  const requiredLimits: Record<string, number> = {};
  for (const name of RAISED_LIMITS) requiredLimits[name] = adapter.limits[name];
  const device = await adapter.requestDevice({
    requiredFeatures: (options.features ?? []).filter((f) => adapter.features.has(f)),
    requiredLimits,
  });
  instances.set(device, gpu);
  return context(device, adapter, true, adapter.info);
}

/** Checks a device Tandem was given and wraps it without taking ownership. */
function adoptDevice(device: GPUDevice): GpuContext {
  const short = Object.entries(NEEDED_LIMITS)
    .filter(([name, needed]) => (device.limits[name as keyof GPUSupportedLimits] as number) < (needed ?? 0))
    .map(([name, needed]) => `${name} ${device.limits[name as keyof GPUSupportedLimits]} < ${needed}`);
  if (short.length) throw new GpuError('device-limits', `tandem gpu: the given device is below Tandem's needs: ${short.join(', ')}`);
  const info = (device as GPUDevice & { adapterInfo?: GPUAdapterInfo }).adapterInfo;
  return context(device, undefined, false, info);
}

function context(device: GPUDevice, adapter: GPUAdapter | undefined, owned: boolean, info: GPUAdapterInfo | undefined): GpuContext {
  return {
    adapter,
    device,
    maxStorageBinding: device.limits.maxStorageBufferBindingSize,
    runtime: `${runtimeName}: ${info?.vendor ?? ''} ${info?.architecture ?? ''} ${info?.description ?? ''}`.replace(/\s+/g, ' ').trim(),
    owned,
    lost: device.lost,
    close,
    [Symbol.dispose]: close,
  };
  // Only the owner drops the instance: an adopted context (a loader's around the caller's device)
  // closing first must not let the GPU object be collected under the owner's live device.
  function close(): void {
    if (!owned) return;
    device.destroy();
    instances.delete(device);
  }
}

/** The WebGPU entry point a device of Tandem's came from (Node keeps one per device), if known. */
export function gpuInstanceOf(device: GPUDevice): GPU | undefined {
  return instances.get(device);
}

/** Throws a typed error unless `other` is `device`: what was made on another device cannot be used on this one. */
export function assertSameDevice(device: GPUDevice, other: GPUDevice, what: string): void {
  if (device !== other) {
    throw new GpuError(
      'device-mismatch',
      `tandem gpu: ${what} runs on another GPUDevice; buffers cannot cross devices. Build it on Tandem's device, or give Tandem its device (acquireGpu({ device }))`,
    );
  }
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
