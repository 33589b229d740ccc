// Positive controls for the readback counter (test/shared/readbacks.ts): each scenario makes a
// readback of one kind on purpose and requires the counter to see it, so a "0 readbacks" elsewhere
// means none happened rather than that the counter was blind. Writes must not count, and the
// watched prototypes must be as they were afterwards. The tf.js and ONNX Runtime kinds are
// controlled in tfjs-scenarios.ts and onnx-scenarios.ts, where those frameworks are set up.
import { acquireGpu, type GpuContext } from '../../src/gpu/index.ts';
import { check } from './assert.ts';
import { countReadbacks, describeReadbacks, type ReadbackKind, type Readbacks } from './readbacks.ts';

async function withDevice(fn: (device: GPUDevice) => Promise<void>): Promise<void> {
  const gpu: GpuContext = await acquireGpu();
  try {
    await fn(gpu.device);
  } finally {
    gpu.close();
  }
}

function expectKinds(r: Readbacks<unknown>, want: Partial<Record<ReadbackKind, number>>, what: string): void {
  for (const [kind, count] of Object.entries(want))
    check(
      r.kinds[kind as ReadbackKind] === count,
      `${what}: ${kind} counted ${r.kinds[kind as ReadbackKind]} times, ${count} expected (${describeReadbacks(r)})`,
    );
  const total = Object.values(want).reduce((a, b) => a + b, 0);
  check(r.readbacks === total, `${what}: ${describeReadbacks(r)} counted, ${total} expected`);
}

function filledBuffer(device: GPUDevice, bytes: number): GPUBuffer {
  const buffer = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(buffer, 0, new Uint8Array(bytes).fill(7));
  return buffer;
}

/** A buffer copied into a MAP_READ buffer and mapped for reading: one copy and one map counted, and the bytes arrive. */
export async function mappedReadIsCounted(): Promise<void> {
  await withDevice(async (device) => {
    const source = filledBuffer(device, 256);
    const readable = device.createBuffer({ size: 256, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const r = await countReadbacks(async () => {
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(source, 0, readable, 0, 256);
      device.queue.submit([encoder.finish()]);
      await readable.mapAsync(GPUMapMode.READ);
      const first = new Uint8Array(readable.getMappedRange())[0];
      readable.unmap();
      return first;
    });
    check(r.result === 7, `mapped bytes ${r.result}`);
    expectKinds(r, { 'map-read': 1, 'copy-to-map-read': 1 }, 'copy + mapAsync(READ)');
    source.destroy();
    readable.destroy();
  });
}

/** Copies into MAP_READ buffers, from a buffer and from a texture, count without a map. */
export async function copiesIntoReadableBuffersAreCounted(): Promise<void> {
  await withDevice(async (device) => {
    const source = filledBuffer(device, 256);
    const texture = device.createTexture({
      size: [4, 4],
      format: 'rgba8unorm',
      usage: GPUTextureUsage.COPY_SRC | GPUTextureUsage.COPY_DST,
    });
    const readable = device.createBuffer({ size: 1024, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const r = await countReadbacks(async () => {
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(source, 0, readable, 0, 256);
      encoder.copyTextureToBuffer({ texture }, { buffer: readable, bytesPerRow: 256 }, [4, 4]);
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
    });
    expectKinds(r, { 'copy-to-map-read': 2 }, 'two copies into a MAP_READ buffer');
    source.destroy();
    texture.destroy();
    readable.destroy();
  });
}

/**
 * Work that only sends data to the GPU or moves it there counts nothing: writeBuffer, a mapped
 * write, a copy between GPU buffers. Afterwards every wrapped method is the original again.
 */
export async function writesAreNotCountedAndTheWatchIsRemoved(): Promise<void> {
  const before = GPUBuffer.prototype.mapAsync;
  const beforeCopy = GPUCommandEncoder.prototype.copyBufferToBuffer;
  await withDevice(async (device) => {
    const source = filledBuffer(device, 256);
    const target = device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    const writable = device.createBuffer({ size: 256, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC });
    const r = await countReadbacks(async () => {
      device.queue.writeBuffer(target, 0, new Uint8Array(256));
      await writable.mapAsync(GPUMapMode.WRITE);
      new Uint8Array(writable.getMappedRange()).fill(1);
      writable.unmap();
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(source, 0, target, 0, 256);
      encoder.copyBufferToBuffer(writable, 0, target, 0, 256);
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
    });
    expectKinds(r, {}, 'uploads and GPU-side copies');
    for (const b of [source, target, writable]) b.destroy();
  });
  check(GPUBuffer.prototype.mapAsync === before, 'mapAsync is the original after counting');
  check(GPUCommandEncoder.prototype.copyBufferToBuffer === beforeCopy, 'copyBufferToBuffer is the original after counting');
}

/**
 * In a page: a copy into a canvas's current texture, 2D getImageData, toDataURL, toBlob,
 * convertToBlob and WebGL readPixels each count as their kind.
 */
export async function canvasReadsAreCounted(): Promise<void> {
  await withDevice(async (device) => {
    const canvas = new OffscreenCanvas(4, 4);
    const context = canvas.getContext('webgpu');
    check(context, 'an OffscreenCanvas has a webgpu context');
    context.configure({ device, format: 'rgba8unorm', usage: GPUTextureUsage.COPY_DST });
    const source = filledBuffer(device, 256 * 4);
    const texture = device.createTexture({
      size: [4, 4],
      format: 'rgba8unorm',
      usage: GPUTextureUsage.COPY_SRC | GPUTextureUsage.COPY_DST,
    });
    // Encoded, never submitted: in headless Chromium on lavapipe, submitting a copy into a canvas
    // texture destroys the device ("A valid external Instance reference no longer exists"), and the
    // counter sees the copy when it is recorded.
    const gpu = await countReadbacks(async () => {
      const current = context.getCurrentTexture();
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToTexture({ buffer: source, bytesPerRow: 256 }, { texture: current }, [4, 4]);
      encoder.copyTextureToTexture({ texture }, { texture: current }, [4, 4]);
      encoder.copyBufferToTexture({ buffer: source, bytesPerRow: 256 }, { texture }, [4, 4]); // not a canvas: not counted
      encoder.finish();
    });
    expectKinds(gpu, { 'copy-to-canvas': 2 }, 'copies into a canvas texture');
    context.unconfigure();
    source.destroy();
    texture.destroy();
  });
  const page = document.createElement('canvas');
  page.width = page.height = 4;
  const offscreen = new OffscreenCanvas(4, 4);
  const glCanvas = document.createElement('canvas');
  const gl = glCanvas.getContext('webgl2') ?? glCanvas.getContext('webgl');
  const r = await countReadbacks(async () => {
    page.getContext('2d')!.getImageData(0, 0, 1, 1);
    offscreen.getContext('2d')!.getImageData(0, 0, 1, 1);
    page.toDataURL();
    await new Promise<Blob | null>((resolve) => page.toBlob(resolve));
    await offscreen.convertToBlob();
    gl?.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array(4));
  });
  expectKinds(r, { 'canvas-read': 5, 'webgl-read': gl ? 1 : 0 }, 'canvas reads');
  check(gl, 'WebGL is there to be counted');
}

/** The scenarios by title; `page` adds the canvas kinds, which exist only in a browser. */
export function readbackScenarios(page: boolean): Record<string, () => Promise<void>> {
  return {
    'readbacks: a copy into a MAP_READ buffer and its mapAsync(READ) are counted': mappedReadIsCounted,
    'readbacks: copies into a MAP_READ buffer count without a map': copiesIntoReadableBuffersAreCounted,
    'readbacks: uploads and GPU-side copies count nothing; the watch is removed afterwards': writesAreNotCountedAndTheWatchIsRemoved,
    ...(page
      ? { 'readbacks: canvas copies, getImageData, toDataURL, toBlob, convertToBlob and readPixels are counted': canvasReadsAreCounted }
      : {}),
  };
}
