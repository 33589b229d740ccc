// An adopted context (a loader's around the caller's device) closing must not drop the dawn
// instance the owner's context holds: dawn.node tears the instance down when its GPU object is
// collected, and the owner's device then crashes the process at a later, GC-chosen moment (seen
// as a glibc assertion or `std::system_error` in a GPT run after its text loader closed).
import { expect, it } from 'vitest';
import { acquireGpu } from '../../src/gpu/index.ts';
import { gpuInstanceOf } from '../../src/gpu/internal.ts';

it("closing an adopted context keeps the owner's instance and device", async () => {
  const gpu = await acquireGpu();
  try {
    const instance = gpuInstanceOf(gpu.device);
    expect(instance).toBeDefined();
    const adopted = await acquireGpu({ device: gpu.device });
    adopted.close();
    expect(gpuInstanceOf(gpu.device)).toBe(instance);
    const buffer = gpu.device.createBuffer({ size: 16, usage: 0x1 | 0x8 }); // MAP_READ | COPY_DST
    await buffer.mapAsync(1); // GPUMapMode.READ: the device still works
    buffer.destroy();
  } finally {
    gpu.close();
  }
  expect(gpuInstanceOf(gpu.device)).toBeUndefined();
});
