// The fixtures as WebCodecs clips, through the wasm demuxer (DecodePool.demuxVideo), and the wasm
// path's own decode of the same frames: the two roads the loader can take, compared pixel by pixel.
import type { DecodePool, DemuxedVideo } from '../../src/decode/index.ts';
import type { EncodedClip } from '../../src/video/webcodecs.ts';
import { configOf } from '../../src/video/gpu-clips.ts';

/** Every packet of a demuxed video as an EncodedClip (the mapping the lead's clipChunks makes per clip). */
export function clipOfDemuxed(video: DemuxedVideo): EncodedClip {
  const chunks = [];
  for (let i = 0; i < video.count; i++) {
    const offset = video.offset[i] ?? 0;
    chunks.push({
      key: video.key[i] === 1,
      timestampUs: video.ptsUs[i] ?? 0,
      durationUs: video.durationUs[i] ?? 0,
      data: video.data.subarray(offset, offset + (video.size[i] ?? 0)),
    });
  }
  return { config: configOf(video), chunks };
}

/** The wasm path's u8 RGB NHWC frames at `timesSeconds` (pool.decodeVideo, frames by time). */
export async function wasmFrames(
  pool: DecodePool,
  bytes: Uint8Array,
  timesSeconds: readonly number[],
  shape: { width: number; height: number; fit: 'cover' | 'stretch'; flip: boolean },
): Promise<Uint8Array> {
  const size = timesSeconds.length * shape.width * shape.height * 3;
  const ptr = pool.malloc(size);
  try {
    await pool.decodeVideo(bytes, ptr, { ...shape, channels: 3, frames: { times: timesSeconds } });
    return new Uint8Array(pool.memory.buffer, ptr, size).slice();
  } finally {
    pool.free(ptr);
  }
}
