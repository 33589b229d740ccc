// tandem/video: clips from video files to batches, on the wasm threads or through WebCodecs into
// WebGPU: videoLoader(source, options), the clip samplers behind it, and the WebCodecs decoder.
export { videoLoader, VideoLoader, VIDEO_EXTENSIONS, type VideoLoaderBatch, type VideoRoads } from './loader.ts';
export type { VideoBackend, VideoLoaderOptions } from './options.ts';
export type { VideoLoaderState } from './state.ts';
export type { VideoDeviceBatch } from './gpu-clips.ts';
export {
  sampleClips,
  type ClipDraw,
  type ClipSampler,
  type ClipShape,
  type PastEndPolicy,
  type SampledClip,
  type VideoTimeline,
} from './samplers.ts';
export { ClipSamplingError, type ClipSamplingErrorCode } from './errors.ts';
export {
  WebCodecsClipDecoder,
  type ClipDecoderOptions,
  type ClipFrameTarget,
  type DecodedClip,
  type EncodedClip,
  type EncodedClipChunk,
  type FrameRoute,
} from './webcodecs.ts';
