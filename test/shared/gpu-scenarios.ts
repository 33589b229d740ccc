// Runtime-neutral test bodies for the GPU path; each throws on failure. Called from the Node +
// WebGPU, browser and Deno tiers so the same checks run everywhere.
import { acquireGpu, AugmentKernel, NormalizeKernel, readBuffer, type BatchShape } from '../../src/gpu/index.ts';
import { augmentReference, sampleAugmentations } from '../../src/gpu/internal.ts';
import { FIXED_NORMALIZATION, normalizeByHand } from './normalize-by-hand.ts';
// Internal layout helpers, imported from their files: the package's door does not export them.
import { SAMPLE_FLOATS } from '../../src/gpu/augment.ts';
import { align4 } from '../../src/gpu/dispatch.ts';
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
    const want = normalizeByHand(input.subarray(0, bytes), shape);
    const err = maxAbsDiff(got, want);
    check(got.length === want.length, `length ${got.length} != ${want.length}`);
    check(err < 1e-5, `GPU normalize differs from CPU by ${err}`);
    kernel.destroy();
    // And against floats fixed in the test, bytes in and floats out.
    const fixed = FIXED_NORMALIZATION;
    const small = await NormalizeKernel.create(device, fixed.shape);
    const fixedSrc = device.createBuffer({ size: align4(fixed.bytes.length), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    const fixedDst = device.createBuffer({ size: small.outputBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
    const padded = new Uint8Array(align4(fixed.bytes.length));
    padded.set(fixed.bytes);
    device.queue.writeBuffer(fixedSrc, 0, padded);
    const fixedEncoder = device.createCommandEncoder();
    small.encode(fixedEncoder, fixedSrc, fixedDst);
    device.queue.submit([fixedEncoder.finish()]);
    const fixedGot = new Float32Array(await readBuffer(device, fixedDst));
    const fixedErr = maxAbsDiff(fixedGot.subarray(0, fixed.imagenet.NCHW.length), fixed.imagenet.NCHW);
    check(fixedErr < 1e-5, `GPU normalize differs from the fixed ImageNet NCHW vector by ${fixedErr}`);
    small.destroy();
    for (const b of [src, dst, fixedSrc, fixedDst]) b.destroy();
    return gpu.runtime;
  } finally {
    gpu.close();
  }
}

/**
 * Augmentation (random resized crop, flip, brightness/contrast) matches its CPU reference with the
 * same per-sample parameters, and the same seed gives the same batch while another seed does not.
 */
export async function augmentMatchesCpuAndIsDeterministic(): Promise<number> {
  const gpu = await acquireGpu();
  try {
    const { device } = gpu;
    const shape = { images: 4, srcHeight: 20, srcWidth: 24, channels: 3, outHeight: 12, outWidth: 10 };
    const bytes = shape.images * shape.srcHeight * shape.srcWidth * shape.channels;
    const input = new Uint8Array(align4(bytes));
    for (let i = 0; i < bytes; i++) input[i] = (i * 97 + ((i / 7) | 0) * 13) & 0xff;
    const kernel = await AugmentKernel.create(device, shape, { scale: [0.3, 1] });
    const src = device.createBuffer({ size: input.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    const dst = device.createBuffer({ size: kernel.outputBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
    device.queue.writeBuffer(src, 0, input);
    const ids = [10, 11, 12, 13];
    const run = async (seed: number) => {
      const encoder = device.createCommandEncoder();
      kernel.encode(encoder, src, dst, seed, ids);
      device.queue.submit([encoder.finish()]);
      return new Float32Array(await readBuffer(device, dst));
    };
    const first = await run(1);
    const samples = sampleAugmentations(1, ids, shape, kernel.options, new Float32Array(ids.length * SAMPLE_FLOATS));
    const want = augmentReference(input, shape.images, shape, samples);
    const err = maxAbsDiff(first, want);
    check(err < 1e-3, `GPU augment differs from CPU by ${err}`);
    check(maxAbsDiff(await run(1), first) === 0, 'same seed must give the same batch');
    check(maxAbsDiff(await run(2), first) > 0.1, 'another seed must give another batch');
    const flips = Array.from({ length: 64 }, (_, i) => sampleAugmentations(5, [i], shape, kernel.options, new Float32Array(8))[4]);
    check(flips.some((f) => f === 1) && flips.some((f) => f === 0), 'flips happen about half of the time');
    kernel.destroy();
    src.destroy();
    dst.destroy();
    return err;
  } finally {
    gpu.close();
  }
}

/**
 * The GPU smoke scenarios by title: every runtime registers them from here. `runtime` is the prefix
 * the adapter's description must have on it ('node', 'deno' or 'browser').
 */
export function gpuScenarios(runtime: 'node' | 'deno' | 'browser'): Record<string, () => Promise<void>> {
  return {
    "a WGSL dispatch on this runtime's WebGPU matches the CPU reference": async () => {
      const adapter = await normalizeMatchesCpu();
      check(adapter.startsWith(runtime), `expected a ${runtime} adapter, got ${adapter}`);
    },
    'GPU augmentation matches its CPU reference and is deterministic per seed': async () => {
      const worst = await augmentMatchesCpuAndIsDeterministic();
      check(worst < 1e-3, `worst difference from the CPU reference ${worst}`);
    },
  };
}
