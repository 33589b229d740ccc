// tandem/video: clips from video files to batches, on the wasm threads or through WebCodecs into
// WebGPU: videoLoader(source, options) and the clip samplers behind it. The WebCodecs decoder is the
// loader's own part (its road is chosen by `backend`), not a door of its own.
export {
  videoLoader,
  VideoLoader,
  VIDEO_EXTENSIONS,
  type VideoLoaderBatch,
  type VideoReads,
  type VideoRoads,
  type VideoTimelines,
  type VideoDecodes,
} from './loader.ts';
// An MP4's index and a clip's packets from it, for DecodePool.decodeVideo without the loader.
export { readMp4Index, type Mp4Index, type Mp4Timeline } from './mp4-index.ts';
export { clipRuns, readClipPackets } from './clip-packets.ts';
export type { VideoBackend, VideoLoaderOptions } from './options.ts';
export type { VideoLoaderState } from './state.ts';
export type { VideoDeviceBatch } from './gpu-clips.ts';
export type { ClipTensorBatch } from '../loader/index.ts';
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
