// tandem/jax in Chromium: jax-js's WebGPU backend (its own device, which Tandem adopts) and its
// wasm backend.
import * as jax from '@jax-js/jax';
import { beforeAll, it } from 'vitest';
import { check } from '../shared/assert.ts';
import {
  deviceBatchIntoJax,
  deviceImagesIntoJax,
  emptyBatchGivesEmptyArrays,
  hostBatchIntoJax,
  imageLoaderIntoJax,
  otherDeviceIsRefused,
  textLoaderIntoJax,
} from '../shared/jax-scenarios.ts';

beforeAll(async () => {
  const backends = await jax.init('webgpu', 'wasm');
  check(backends.includes('webgpu'), `jax-js started ${backends.join(', ')}`);
});

it("a CPU text batch goes into jax-js's WebGPU backend, equal to the batch", () => hostBatchIntoJax(jax, 'webgpu'));
it("a CPU text batch goes into jax-js's wasm backend, equal to the batch", () => hostBatchIntoJax(jax, 'wasm'));
it('an empty batch gives [0, seqLen] arrays on WebGPU', () => emptyBatchGivesEmptyArrays(jax, 'webgpu'));
it("a GPU text batch on jax-js's device is copied GPU to GPU, equal to the batch, and survives the refill", () => deviceBatchIntoJax(jax));
it("a GPU batch of another device is refused (GpuError 'device-mismatch')", () => otherDeviceIsRefused(jax));
it("an image batch on jax-js's device becomes float32 images and int32 labels", () => deviceImagesIntoJax(jax));
it("textLoader()'s CPU and GPU batches go into jax-js's WebGPU backend, equal to its rows", () => textLoaderIntoJax(jax, 'webgpu', true));
it("loader()'s to: jax gives its batches as jax-js arrays, equal to its GPU batches", () => imageLoaderIntoJax(jax));
