// The fixtures as WebCodecs clips, through the wasm demuxer (DecodePool.demuxVideo), and the wasm
// path's own decode of the same frames: the two roads the loader can take, compared pixel by pixel.
import type { DecodePool, DemuxedVideo } from '../../src/decode/index.ts';
import type { EncodedClip } from '../../src/video/webcodecs.ts';
import { packetsAsClip } from '../../src/video/gpu-clips.ts';

/** Every packet of a demuxed video as an EncodedClip (the mapping the loader makes per clip). */
export function clipOfDemuxed(video: DemuxedVideo): EncodedClip {
  return packetsAsClip(video);
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
