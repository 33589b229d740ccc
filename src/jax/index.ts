// tandem/jax: Tandem's batches as jax-js arrays. jax-js is an optional peer dependency: this door
// only names its types and takes its namespace from the caller, so the core never loads it.
export { jaxTokens, type DeviceTokenBatch, type HostTokenBatch, type JaxTokens, type JaxTokensOptions } from './tokens.ts';
export type { TokenArrays } from './tokens.ts';
export { jaxImages, type DeviceImageBatch, type JaxImages } from './images.ts';
export type { Jax, JaxArray, JaxDevice } from './copy.ts';
export { FeedError, GpuError, type FeedErrorCode, type GpuErrorCode } from '../gpu/index.ts';
