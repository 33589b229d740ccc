// The peers a web user writes without Tandem, both ending where Tandem's columns end: normalised
// f32 clips in a GPU buffer, a batch at a time.
//   element       a <video> per lane: object URL of the file, for each wanted frame set currentTime
//                 and await 'seeked', drawImage (cover geometry) into a 112×112 canvas, getImageData,
//                 normalise on the CPU, writeBuffer;
//   webcodecs-own VideoDecoder fed the clip's packets (demuxed by Tandem's demuxer, as a user's
//                 mp4box.js would), createImageBitmap(frame, cover rectangle, resize) per wanted
//                 frame, then the same canvas → getImageData → normalise → writeBuffer.
import type { DecodePool } from '../../../src/decode/index.ts';
import { clipChunks } from '../../../src/video/gpu-clips.ts';
import type { SampledClip } from '../../../src/video/index.ts';
import { CLIP, type ClipPlan, coverSource, MEAN, STD } from '../types.ts';

const SIZE = CLIP.size;
const FRAME_FLOATS = SIZE * SIZE * CLIP.channels;
export const CLIP_FLOATS = CLIP.frames * FRAME_FLOATS;
const SCALE = MEAN.map((_, c) => 1 / 255 / STD[c]!);
const BIAS = MEAN.map((m, c) => -m / STD[c]!);

export interface PeerResult {
  clips: number;
  /** When the first batch's worth of clips was written (performance.now()). */
  firstBatchAt: number;
  batches: number;
  failures: number;
  firstError?: string;
}

/** A 112×112 canvas to read frames through, and the clip's floats: one per lane, reused for every clip. */
class Lane {
  readonly canvas = new OffscreenCanvas(SIZE, SIZE);
  readonly context = this.canvas.getContext('2d', { willReadFrequently: true })!;
  readonly floats = new Float32Array(CLIP_FLOATS);

  /** The canvas's pixels, RGBA u8, into frame `frame` of the clip's floats as normalised RGB. */
  readFrame(frame: number): void {
    const rgba = this.context.getImageData(0, 0, SIZE, SIZE).data;
    const out = this.floats;
    let o = frame * FRAME_FLOATS;
    for (let i = 0; i < rgba.length; i += 4) {
      out[o++] = rgba[i]! * SCALE[0]! + BIAS[0]!;
      out[o++] = rgba[i + 1]! * SCALE[1]! + BIAS[1]!;
      out[o++] = rgba[i + 2]! * SCALE[2]! + BIAS[2]!;
    }
  }
}

type ClipFn = (lane: Lane, bytes: Uint8Array, plan: ClipPlan, laneIndex: number) => Promise<void>;

/** Every clip through `clipFn` on `lanes` lanes, each clip written into its slot of the batch buffer. */
async function run(
  device: GPUDevice,
  batch: GPUBuffer,
  files: readonly Uint8Array[],
  plans: readonly ClipPlan[],
  lanes: Lane[],
  clipFn: ClipFn,
): Promise<PeerResult> {
  let next = 0,
    failures = 0,
    clips = 0,
    firstBatchAt = Number.NaN;
  let firstError: string | undefined;
  await Promise.all(
    lanes.map(async (lane, laneIndex) => {
      for (let i = next++; i < files.length; i = next++) {
        try {
          await clipFn(lane, files[i]!, plans[i]!, laneIndex);
          device.queue.writeBuffer(batch, (i % CLIP.batchSize) * CLIP_FLOATS * 4, lane.floats);
          if (++clips === Math.min(CLIP.batchSize, files.length)) firstBatchAt = performance.now();
        } catch (e) {
          failures++;
          firstError ??= `${plans[i]!.key}: ${(e as Error).message}`;
        }
      }
    }),
  );
  return { clips, firstBatchAt, batches: Math.ceil(files.length / CLIP.batchSize), failures, ...(firstError ? { firstError } : {}) };
}

const once = (target: EventTarget, ok: string, what: string) =>
  new Promise<void>((resolve, reject) => {
    const done = () => (target.removeEventListener(ok, done), target.removeEventListener('error', fail), resolve());
    const fail = () => (
      target.removeEventListener(ok, done), target.removeEventListener('error', fail), reject(new Error(`<video> error while ${what}`))
    );
    target.addEventListener(ok, done);
    target.addEventListener('error', fail);
  });

/** The <video> element peer. */
export class ElementPeer {
  readonly #lanes: Lane[];
  readonly #videos: HTMLVideoElement[];
  constructor(lanes: number) {
    this.#lanes = Array.from({ length: lanes }, () => new Lane());
    this.#videos = Array.from({ length: lanes }, () => {
      const v = document.createElement('video');
      v.muted = true;
      v.preload = 'auto';
      return v;
    });
  }

  pass(device: GPUDevice, batch: GPUBuffer, files: readonly Uint8Array[], plans: readonly ClipPlan[]): Promise<PeerResult> {
    return run(device, batch, files, plans, this.#lanes, async (lane, bytes, plan, laneIndex) => {
      const video = this.#videos[laneIndex]!;
      const url = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'video/mp4' }));
      try {
        const loaded = once(video, 'loadeddata', 'loading');
        video.src = url;
        await loaded;
        const { sx, sy, sw, sh } = coverSource(video.videoWidth, video.videoHeight, SIZE);
        for (let f = 0; f < plan.times.length; f++) {
          const seeked = once(video, 'seeked', 'seeking');
          // 1 ms into the frame, so that rounding of its timestamp cannot land on the one before.
          video.currentTime = plan.times[f]! + 0.001;
          await seeked;
          lane.context.drawImage(video, sx, sy, sw, sh, 0, 0, SIZE, SIZE);
          lane.readFrame(f);
        }
      } finally {
        video.removeAttribute('src');
        video.load();
        URL.revokeObjectURL(url);
      }
    });
  }
}

/** The user's own WebCodecs loop, without Tandem's frame pass. */
export class OwnWebCodecsPeer {
  readonly #lanes: Lane[];
  constructor(
    lanes: number,
    readonly pool: DecodePool,
  ) {
    this.#lanes = Array.from({ length: lanes }, () => new Lane());
  }

  pass(device: GPUDevice, batch: GPUBuffer, files: readonly Uint8Array[], plans: readonly ClipPlan[]): Promise<PeerResult> {
    return run(device, batch, files, plans, this.#lanes, async (lane, bytes, plan) => {
      const video = await this.pool.demuxVideo(bytes, { packets: true });
      const clip = clipChunks(video, { frameTimes: Float64Array.from(plan.times) } as SampledClip);
      const wantUs = plan.times.map((t) => Math.round(t * 1e6));
      const { sx, sy, sw, sh } = coverSource(video.codedWidth, video.codedHeight, SIZE);
      const pending: Promise<void>[] = [];
      let filled = 0;
      let failure: Error | undefined;
      const decoder = new VideoDecoder({
        output: (frame) => {
          const slots = wantUs.flatMap((us, f) => (Math.abs(us - frame.timestamp) <= 1500 ? [f] : []));
          if (!slots.length) return frame.close();
          pending.push(
            createImageBitmap(frame, sx, sy, sw, sh, { resizeWidth: SIZE, resizeHeight: SIZE, resizeQuality: 'medium' }).then((bitmap) => {
              frame.close();
              lane.context.drawImage(bitmap, 0, 0);
              bitmap.close();
              for (const f of slots) lane.readFrame(f), filled++;
            }),
          );
        },
        error: (e) => (failure = e),
      });
      try {
        decoder.configure(clip.config);
        for (const c of clip.chunks)
          decoder.decode(
            new EncodedVideoChunk({ type: c.key ? 'key' : 'delta', timestamp: c.timestampUs, duration: c.durationUs, data: c.data }),
          );
        await decoder.flush();
        await Promise.all(pending);
      } finally {
        if (decoder.state !== 'closed') decoder.close();
      }
      if (failure) throw failure;
      if (filled !== wantUs.length) throw new Error(`${filled} of ${wantUs.length} frames decoded`);
    });
  }
}
