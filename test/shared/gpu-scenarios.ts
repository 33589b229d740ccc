// Runtime-neutral test bodies for the GPU path; each throws on failure. Called from the Node +
// WebGPU, browser and Deno tiers so the same checks run everywhere.
import { acquireGpu, align4, NormalizeKernel, normalizeReference, readBuffer, type BatchShape } from '../../src/gpu/index.ts';
import { check, maxAbsDiff } from './assert.ts';

/** A WGSL compute dispatch (u8 NHWC → normalised f32 NCHW) matches the CPU reference. */
export async function normalizeMatchesCpu(shape: BatchShape = { images: 3, height: 17, width: 13, channels: 3 }): Promise<string> {
  const gpu = await acquireGpu();
  try {
    const { device } = gpu;
    const bytes = shape.images * shape.height * shape.width * shape.channels;
    const input = new Uint8Array(align4(bytes));
    for (let i = 0; i < bytes; i++) input[i] = (i * 37 + 11) & 0xff;
    const kernel = await NormalizeKernel.create(device, shape);
    const src = device.createBuffer({ size: input.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    const dst = device.createBuffer({ size: kernel.outputBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
    device.queue.writeBuffer(src, 0, input);
    const encoder = device.createCommandEncoder();
    kernel.encode(encoder, src, dst);
    device.queue.submit([encoder.finish()]);
    const got = new Float32Array(await readBuffer(device, dst));
    const want = normalizeReference(input.subarray(0, bytes), shape);
    const err = maxAbsDiff(got, want);
    check(got.length === want.length, `length ${got.length} != ${want.length}`);
    check(err < 1e-5, `GPU normalize differs from CPU by ${err}`);
    kernel.destroy();
    return gpu.runtime;
  } finally {
    gpu.close();
  }
}
