// Clips for the WebCodecs tests, made in the page: known frames drawn into an OffscreenCanvas and
// encoded with VideoEncoder (H.264 as length-prefixed 'avc' with an avcC description, as MP4 holds
// it; VP8; VP9), the same frames decoded again for the CPU reference, and a watch over every
// VideoDecoder and VideoFrame the code under test makes.
import type { EncodedClip } from '../../src/video/webcodecs.ts';

export const FRAME_US = 40_000;

/** The page's own VideoDecoder, taken before any watch replaces it: the reference's decodes are not watched. */
const PlainVideoDecoder = globalThis.VideoDecoder;

/** Frame i of a clip: a colour ramp, a bar that moves with i and a left/right asymmetric wedge. */
function drawFrame(ctx: OffscreenCanvasRenderingContext2D, i: number, width: number, height: number): void {
  const ramp = ctx.createLinearGradient(0, 0, width, height);
  ramp.addColorStop(0, `rgb(${(30 + 37 * i) % 256}, 60, 200)`);
  ramp.addColorStop(1, `rgb(230, ${(200 - 29 * i + 256) % 256}, 40)`);
  ctx.fillStyle = ramp;
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = 'rgb(250, 250, 250)';
  ctx.fillRect((8 + 11 * i) % (width - 16), 4, 12, height - 8);
  ctx.fillStyle = 'rgb(10, 20, 10)';
  ctx.beginPath();
  ctx.moveTo(0, 0);
  ctx.lineTo(width / 3, height / 2);
  ctx.lineTo(0, height);
  ctx.fill();
}

/** `frames` frames of `width`×`height` encoded with `codec`, timestamps i · FRAME_US, one key frame first. */
export async function encodeClip(codec: string, width: number, height: number, frames: number): Promise<EncodedClip> {
  const canvas = new OffscreenCanvas(width, height);
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('no 2d context');
  const chunks: EncodedClip['chunks'][number][] = [];
  let config: VideoDecoderConfig | undefined;
  let failure: unknown;
  const encoder = new VideoEncoder({
    output: (chunk, meta) => {
      const data = new Uint8Array(chunk.byteLength);
      chunk.copyTo(data);
      chunks.push({ key: chunk.type === 'key', timestampUs: chunk.timestamp, durationUs: chunk.duration ?? FRAME_US, data });
      if (meta?.decoderConfig) config = meta.decoderConfig;
    },
    error: (e) => {
      failure = e;
    },
  });
  encoder.configure({
    codec,
    width,
    height,
    bitrate: 4_000_000,
    framerate: 25,
    ...(codec.startsWith('avc1') ? { avc: { format: 'avc' as const } } : {}),
  });
  for (let i = 0; i < frames; i++) {
    drawFrame(ctx, i, width, height);
    const frame = new VideoFrame(canvas, { timestamp: i * FRAME_US, duration: FRAME_US });
    encoder.encode(frame, { keyFrame: i === 0 });
    frame.close();
  }
  await encoder.flush();
  encoder.close();
  if (failure || !config) throw new Error(`encoding ${codec} failed: ${String(failure)}`);
  return { config, chunks };
}

export interface RgbaFrame {
  timestampUs: number;
  width: number;
  height: number;
  /** RGBA bytes, `width · 4` per row. */
  rgba: Uint8Array;
}

/** Every frame of `clip` as RGBA bytes (VideoFrame.copyTo: the test's own view of the pixels). */
export async function decodeToRgba(clip: EncodedClip): Promise<RgbaFrame[]> {
  const frames: Promise<RgbaFrame>[] = [];
  const decoder = new PlainVideoDecoder({
    output: (frame) => {
      const width = frame.displayWidth;
      const height = frame.displayHeight;
      const rgba = new Uint8Array(width * height * 4);
      frames.push(
        frame
          .copyTo(rgba, { format: 'RGBA', layout: [{ offset: 0, stride: width * 4 }] })
          .then(() => ({ timestampUs: frame.timestamp, width, height, rgba }))
          .finally(() => frame.close()),
      );
    },
    error: () => {},
  });
  decoder.configure(clip.config);
  for (const c of clip.chunks)
    decoder.decode(
      new EncodedVideoChunk({ type: c.key ? 'key' : 'delta', timestamp: c.timestampUs, duration: c.durationUs, data: c.data }),
    );
  await decoder.flush();
  decoder.close();
  return Promise.all(frames);
}

/** Watches every VideoDecoder made and every frame they output until restore(). */
export function watchWebCodecs(): {
  decoders: VideoDecoder[];
  /** The most chunks any watched decoder held queued, counting the one being given. */
  maxQueued(): number;
  openFrames(): number;
  framesOut(): number;
  onFrame?: (framesOut: number) => void;
  restore(): void;
} {
  const Original = globalThis.VideoDecoder;
  const originalClose = VideoFrame.prototype.close;
  const open = new Set<VideoFrame>();
  let out = 0;
  let queued = 0;
  const watch = {
    decoders: [] as VideoDecoder[],
    maxQueued: () => queued,
    openFrames: () => open.size,
    framesOut: () => out,
    onFrame: undefined as ((framesOut: number) => void) | undefined,
    restore() {
      globalThis.VideoDecoder = Original;
      VideoFrame.prototype.close = originalClose;
    },
  };
  class Watched extends Original {
    constructor(init: VideoDecoderInit) {
      super({
        ...init,
        output: (frame) => {
          open.add(frame);
          out++;
          init.output(frame);
          watch.onFrame?.(out);
        },
      });
      watch.decoders.push(this);
    }
    override decode(chunk: EncodedVideoChunk): void {
      queued = Math.max(queued, this.decodeQueueSize + 1);
      super.decode(chunk);
    }
  }
  globalThis.VideoDecoder = Watched;
  VideoFrame.prototype.close = function (this: VideoFrame) {
    open.delete(this);
    originalClose.call(this);
  };
  return watch;
}
