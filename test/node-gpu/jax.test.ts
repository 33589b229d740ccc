// tandem/jax on jax-js's WebGPU backend in Node, on dawn.node. jax-js looks for navigator.gpu when
// it starts that backend and reads navigator.userAgent when it loads and tunes its kernels, so
// Node 20 (no navigator) needs one for as long as jax-js runs: this file's worker keeps it.
import * as jax from '@jax-js/jax';
import { beforeAll, it } from 'vitest';
import { getGpu } from '../../src/runtime/index.ts';
import { check } from '../shared/assert.ts';
import {
  deviceBatchIntoJax,
  deviceImagesIntoJax,
  hostBatchIntoJax,
  imageLoaderIntoJax,
  otherDeviceIsRefused,
  textLoaderIntoJax,
} from '../shared/jax-scenarios.ts';

beforeAll(async () => {
  const gpu = await getGpu();
  if (!('navigator' in globalThis))
    Object.defineProperty(globalThis, 'navigator', { value: { gpu, userAgent: `Node.js/${process.version}` }, configurable: true });
  const backends = await jax.init('webgpu', 'wasm');
  check(backends.includes('webgpu'), `jax-js started ${backends.join(', ')}`);
});

it("a CPU text batch goes into jax-js's WebGPU backend, equal to the batch", () => hostBatchIntoJax(jax, 'webgpu'));
it("a GPU text batch on jax-js's device is copied GPU to GPU, equal to the batch, and survives the refill", () => deviceBatchIntoJax(jax));
it("a GPU batch of another device is refused (GpuError 'device-mismatch')", () => otherDeviceIsRefused(jax));
it("an image batch on jax-js's device becomes float32 images and int32 labels", () => deviceImagesIntoJax(jax));
it("textLoader()'s CPU and GPU batches go into jax-js's WebGPU backend, equal to its rows", () => textLoaderIntoJax(jax, 'webgpu', true));
it("loader()'s to: jax gives its batches as jax-js arrays, equal to its GPU batches", () => imageLoaderIntoJax(jax));
