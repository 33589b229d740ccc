export {
  DecodePool,
  PoolBuffer,
  type DecodedImageInfo,
  type DecodeTarget,
  type DecodePoolOptions,
  type DecodePoolStats,
  type DecodeMode,
  type ImageDecodeOptions,
  type RandomCropOptions,
  type VideoStreamOptions,
} from './pool.ts';
export { codecString, type DemuxedVideo, type VideoDemuxOptions } from './demux.ts';
export { fileByteSource, memoryByteSource, type ByteSource } from './stream.ts';
export { PACKET_KEY, PACKET_RUN, type PacketCodec, type VideoPackets } from './packets.ts';
export { DecodeError, type DecodeErrorCode } from './errors.ts';
export { SharedClip, SharedClipDecode, type SharedClipOptions } from './shared-clips.ts';
export { VideoClipBatcher, type EncodedClip, type VideoClipBatch, type VideoClipBatcherOptions } from './clips.ts';
export { ImageBatcher, type EncodedImage, type ImageBatch, type ImageBatcherOptions, type SlotToken } from './batches.ts';
export {
  audioClips,
  frameCount,
  type AudioDecodeOptions,
  type ClipOptions,
  type DecodedAudioInfo,
  type DecodedVideoInfo,
  type FrameSelection,
  type MediaCodec,
  type MediaFormat,
  type VideoDecodeOptions,
} from './media.ts';
