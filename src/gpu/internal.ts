// What the rooms above gpu/ (tfjs, onnx, vit, loader, text) share with it, and users do not see: this
// file is not in package.json's exports. The CPU references live here too; tests import them.
export { assertSameDevice, gpuInstanceOf, onCpuAdapter } from './device.ts';
export { UniformStruct, uniformBuffer, type UniformType, type UniformValues } from './uniforms.ts';
export { checkFeedShape, feedDims, GpuNormalizer, liveBytes, normalizeOnCpu, resolveFeed, type FeedShape } from './feed.ts';
export { normalizeReference } from './normalize.ts';
export { augmentReference, sampleAugmentations } from './augment.ts';
export { DeviceRing, type BufferSet, type RingBatch } from './ring.ts';
