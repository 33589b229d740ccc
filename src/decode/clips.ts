// Video clips decoded straight into batch buffers in the pool's shared memory: each clip's frames
// land in its slot of a [batch, frames, height, width, channels] u8 buffer, with the frames'
// presentation times beside it. The slot machinery (input order, dense batches, release) is
// SlotBatcher's, the same as images'.
import { OptionChecker } from '../errors/index.ts';
import { DecodeError } from './errors.ts';
import type { FIT_CODES } from './abi.ts';
import type { DecodePool } from './pool.ts';
import type { DecodedVideoInfo, VideoDecodeOptions } from './media.ts';
import type { VideoPackets } from './packets.ts';
import { SharedClip } from './shared-clips.ts';
import { MAX_BATCH_BYTES } from './abi.ts';
import { SlotBatcher, WasmSlots, type FinishedBuffer } from './slot-batches.ts';

/** One clip to decode: the video's bytes, the frames wanted, and what travels with them. */
export interface EncodedClip {
  /**
   * The whole file, or the clip's packets cut from it (VideoPackets; `times` must then be
   * `ownFrameTimes`), or its part of a decode shared with other clips of the video (SharedClip,
   * from SharedClipDecode.clip: the frames are then the member's own).
   */
  bytes: Uint8Array | VideoPackets | SharedClip;
  /**
   * Presentation times (s, from the stream's start) of the frames wanted, one per slot: each slot
   * gets the frame shown at that time. Give a frame's own time (a sampler's `frameTimes`) to get
   * that frame.
   */
  times: ArrayLike<number>;
  /**
   * `times` are the frames' own times as the demuxer gives them (a sampler's `frameTimes` over
   * `demuxVideo`'s timeline): frames no wanted frame references are then not decoded
   * (`FrameSelection`'s `frameTimes`). Default false.
   */
  ownFrameTimes?: boolean;
  label?: number;
  key?: string;
  /** Crop box in source pixels, the same for every frame of the clip (a random crop fixed per clip). */
  crop?: { x: number; y: number; width: number; height: number };
  /** Mirror every frame of the clip left to right. */
  flip?: boolean;
}

/** A batch of decoded clips in shared wasm memory: u8, [count, frames, height, width, channels]. */
export interface VideoClipBatch {
  readonly sequence: number;
  readonly count: number;
  readonly shape: readonly [number, number, number, number, number];
  readonly dtype: 'uint8';
  readonly layout: 'NFHWC';
  /** A view of the batch in wasm memory (no copy); valid until release(). */
  readonly data: Uint8Array;
  /** Byte offset of the batch in wasm memory. */
  readonly pointer: number;
  readonly labels: Int32Array;
  readonly keys: readonly string[];
  /** Presentation time (s) of the frame in each slot, count × frames; NaN where the video had none. */
  readonly frameTimes: Float64Array;
  release(): void;
  [Symbol.dispose](): void;
}

export interface VideoClipBatcherOptions {
  batchSize: number;
  /** Frames per clip: every clip's `times` must have this many entries. */
  frames: number;
  height: number;
  width: number;
  channels?: 1 | 3 | 4;
  /** How a frame fills its slot (default 'cover': shorter side to size, centre crop). */
  fit?: keyof typeof FIT_CODES;
  /** Batch buffers in wasm memory (default 4). */
  buffers?: number;
  /** Limits and filter for every clip's decode. */
  decode?: Pick<VideoDecodeOptions, 'filter' | 'maxPixels' | 'maxDurationSeconds' | 'timeLimitMs'>;
}

/**
 * The times a video job is given for frames wanted at `times` (s). The job takes whole ms: a
 * frame's own time is rounded up (less a µs of float error), so that it selects that frame and
 * not the one before it (frames are at least 1 ms apart).
 */
export function decoderTimes(times: ArrayLike<number>): number[] {
  return Array.from(times, (t) => Math.max(0, Math.ceil((t - 1e-6) * 1000) / 1000));
}

/**
 * A clip's frames into `target` in the pool's memory: decoded from its own bytes or packets, or
 * taken from the decode it shares with other clips of its video.
 */
export function decodeClipInto(
  pool: DecodePool,
  input: Uint8Array | VideoPackets | SharedClip,
  target: number,
  options: VideoDecodeOptions,
  signal?: AbortSignal,
): Promise<DecodedVideoInfo> {
  if (!(input instanceof SharedClip)) return pool.decodeVideo(input, target, options, signal);
  if (input.decode.pool !== pool)
    throw new DecodeError('bad-request', 'a shared clip is decoded on the pool its SharedClipDecode was made with');
  const { frames: _ownFrames, ...shared } = options;
  return input.decode.decodeInto(input.member, target, shared, signal);
}

/**
 * Decodes clips straight into slots of reusable [batch, frames, H, W, C] buffers in the decode
 * pool's memory. Add it to a pipeline with `builder.batch(batcher, { concurrency: pool.maxInFlight })`.
 * A clip that fails (a broken, cut or unsupported video) fails its item with its DecodeError; its
 * slot is filled from the end, as images' are.
 */
export class VideoClipBatcher extends SlotBatcher<EncodedClip, VideoClipBatch> {
  readonly #pool: DecodePool;
  readonly shape: readonly [number, number, number, number];
  readonly #request: Omit<VideoDecodeOptions, 'frames'>;
  readonly #frames: number;

  constructor(pool: DecodePool, options: VideoClipBatcherOptions) {
    const o = new OptionChecker('VideoClipBatcher options', options, [
      'batchSize',
      'frames',
      'height',
      'width',
      'channels',
      'fit',
      'buffers',
      'decode',
    ]);
    o.integer('batchSize', 0, 1, 65536);
    const frames = o.integer('frames', 0, 1, 4096);
    o.integer('height', 0, 1, 32768);
    o.integer('width', 0, 1, 32768);
    const channels = o.integer('channels', 3, 1, 4);
    if (channels === 2) o.fail('channels', '1, 3 or 4');
    o.optionalInteger('buffers', 2, 1024);
    const fit = o.raw('fit');
    if (fit !== undefined && fit !== 'cover' && fit !== 'stretch' && fit !== 'contain') o.fail('fit', "'cover', 'stretch' or 'contain'");
    const decode = o.raw('decode');
    if (decode !== undefined && (typeof decode !== 'object' || decode === null)) o.fail('decode', 'an object of decode options');
    const slotBytes = frames * options.height * options.width * channels;
    if (slotBytes * options.batchSize > MAX_BATCH_BYTES)
      o.fail('batchSize', 'a batch under 2 GiB (batchSize × frames × height × width × channels)');
    super(new WasmSlots(pool), slotBytes, options.batchSize, options.buffers ?? 4, frames);
    this.#pool = pool;
    this.#frames = frames;
    this.shape = [frames, options.height, options.width, channels];
    this.#request = {
      ...options.decode,
      width: options.width,
      height: options.height,
      channels: channels as 1 | 3 | 4,
      fit: options.fit ?? 'cover',
    };
  }

  protected override async fill(
    item: EncodedClip,
    pointer: number,
    buffer: { extra: Float64Array },
    index: number,
    signal?: AbortSignal,
  ): Promise<void> {
    const n = this.#frames;
    const times = buffer.extra.subarray(index * n, (index + 1) * n);
    times.fill(Number.NaN);
    if (item.times.length !== n)
      throw new DecodeError(
        'bad-request',
        `VideoClipBatcher: clip ${item.key ?? ''} has ${item.times.length} frame times, the batcher ${n}`,
      );
    const request = {
      ...this.#request,
      frames: item.ownFrameTimes ? { frameTimes: Array.from(item.times) } : { times: decoderTimes(item.times) },
      ...(item.crop ? { crop: item.crop } : {}),
      ...(item.flip ? { flip: true } : {}),
    };
    const info = await decodeClipInto(this.#pool, item.bytes, pointer, request, signal);
    times.set(info.timestamps);
  }

  protected override describe(f: FinishedBuffer): VideoClipBatch {
    const [frames, h, w, c] = this.shape;
    const { buffer, count, guard } = f;
    const view = (this.storage as WasmSlots).view(buffer.pointer, count * this.slotBytes);
    return {
      sequence: buffer.sequence,
      count,
      shape: [count, frames, h, w, c],
      dtype: 'uint8',
      layout: 'NFHWC',
      get data() {
        return guard(view());
      },
      pointer: buffer.pointer,
      get labels() {
        return guard(buffer.labels.subarray(0, count));
      },
      get keys() {
        return guard(buffer.keys.slice(0, count));
      },
      get frameTimes() {
        return guard(buffer.extra.subarray(0, count * frames));
      },
      ...f.ends,
    };
  }
}
