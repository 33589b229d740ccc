// Deno tier: tandem/jax on jax-js's WebGPU backend (Deno has navigator.gpu) and its wasm backend.
import './limits.ts';
import * as jax from '@jax-js/jax';
import { check } from '../shared/assert.ts';
import { deviceBatchIntoJax, deviceImagesIntoJax, hostBatchIntoJax, otherDeviceIsRefused } from '../shared/jax-scenarios.ts';

const backends = await jax.init('webgpu', 'wasm');
check(backends.includes('webgpu'), `jax-js started ${backends.join(', ')}`);

Deno.test("a CPU text batch goes into jax-js's WebGPU backend, equal to the batch", () => hostBatchIntoJax(jax, 'webgpu'));
Deno.test("a CPU text batch goes into jax-js's wasm backend, equal to the batch", () => hostBatchIntoJax(jax, 'wasm'));
Deno.test("a GPU text batch on jax-js's device is copied GPU to GPU, equal to the batch, and survives the refill", () =>
  deviceBatchIntoJax(jax));
Deno.test("a GPU batch of another device is refused (GpuError 'device-mismatch')", () => otherDeviceIsRefused(jax));
Deno.test("an image batch on jax-js's device becomes float32 images and int32 labels", () => deviceImagesIntoJax(jax));
