// Small GPU fixtures for the ViT scenarios: upload, run, read back, compare with a relative error.
import { readBuffer } from '../../src/gpu/index.ts';
import { record, type Dispatch } from '../../src/vit/kernels.ts';
import { rng } from '../../src/vit/config.ts';
import { check } from './assert.ts';

// STORAGE | COPY_SRC | COPY_DST as numbers: the GPUBufferUsage global only exists once a GPU is acquired in Node.
export const STORAGE = 0x80 | 0x4 | 0x8;

export function upload(device: GPUDevice, data: Float32Array<ArrayBuffer> | Int32Array<ArrayBuffer> | ArrayLike<number>): GPUBuffer {
  const typed = data instanceof Float32Array || data instanceof Int32Array ? data : Float32Array.from(data);
  const buffer = device.createBuffer({ size: Math.max(16, typed.byteLength), usage: STORAGE });
  device.queue.writeBuffer(buffer, 0, typed);
  return buffer;
}

export function zeros(device: GPUDevice, n: number): GPUBuffer {
  return device.createBuffer({ size: Math.max(16, n * 4), usage: STORAGE });
}

export async function run(device: GPUDevice, dispatches: Dispatch[]): Promise<void> {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  record(pass, dispatches);
  pass.end();
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
}

export async function read(device: GPUDevice, buffer: GPUBuffer, n: number, offset = 0): Promise<Float32Array> {
  return new Float32Array(await readBuffer(device, buffer, n * 4, offset * 4));
}

export function random(n: number, seed: number, scale = 1): Float64Array {
  const next = rng(seed);
  return Float64Array.from({ length: n }, () => (next() * 2 - 1) * scale);
}

/** max |got − want| / max |want|: the error measure of every GPU-vs-CPU comparison here. */
export function relErr(got: ArrayLike<number>, want: ArrayLike<number>): number {
  if (got.length !== want.length) return Infinity;
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < want.length; i++) {
    diff = Math.max(diff, Math.abs(got[i]! - want[i]!));
    scale = Math.max(scale, Math.abs(want[i]!));
  }
  return Number.isNaN(diff) ? Infinity : diff / Math.max(scale, 1e-30);
}

export function close(name: string, got: ArrayLike<number>, want: ArrayLike<number>, tol = 1e-3, log?: string[]): number {
  const e = relErr(got, want);
  log?.push(`${name}: ${e.toExponential(2)}`);
  check(e <= tol, `${name}: relative error ${e} > ${tol}`);
  return e;
}
