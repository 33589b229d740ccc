// The WebCodecs decode path for video clips: the browser's VideoDecoder (hardware where it has
// one, software otherwise) decodes a clip's chunks, and each frame goes straight from its
// VideoFrame into a caller's GPU buffer through one compute pass (frame-pass.ts): crop, fit, the
// wasm path's antialiased bilinear resize, flip and normalisation, with no readback to the CPU.
import { DecodeError } from '../decode/index.ts';
import { OptionChecker, OptionError } from '../errors/index.ts';
import { SlotPool } from '../sync/index.ts';
import { ClipRun, type DecodedClip, type EncodedClip, PooledDecoder } from './decoder-pool.ts';
import { ClipPass, FramePass, type FrameRoute } from './frame-pass.ts';
import { type ClipFrameTarget, checkTarget } from './frame-target.ts';

export type { DecodedClip, EncodedClip, EncodedClipChunk } from './decoder-pool.ts';
export type { FrameRoute } from './frame-pass.ts';
export type { ClipFrameTarget, SourceArea } from './frame-target.ts';

export interface ClipDecoderOptions {
  /** VideoDecoders in the pool, each decoding one clip at a time (default 2). */
  decoders?: number;
  /** Chunks queued in a decoder at most; feeding waits for its 'dequeue' event beyond (default 8). */
  decodeQueueSize?: number;
  /** The first route to try for getting a frame to the GPU (default 'external'; see frame-pass.ts). */
  route?: FrameRoute;
}

const MAX_WANTED = 1 << 20;
const supportCache = new Map<string, Promise<boolean>>();

/**
 * Decodes encoded clips with WebCodecs' VideoDecoder into f32 NHWC frames of a GPU buffer, the
 * tensor the wasm path gives after NormalizeKernel with layout NHWC. Browsers only: Deno and Node
 * have no VideoDecoder (isSupported says false there, and create() throws a DecodeError
 * 'module-unavailable').
 */
export class WebCodecsClipDecoder {
  readonly #pass: FramePass;
  readonly #pool: SlotPool<PooledDecoder>;
  readonly #queueSize: number;
  readonly #closing = new AbortController();
  readonly #running = new Set<Promise<unknown>>();

  private constructor(pass: FramePass, decoders: number, queueSize: number) {
    this.#pass = pass;
    this.#queueSize = queueSize;
    this.#pool = new SlotPool(Array.from({ length: decoders }, () => new PooledDecoder()));
  }

  /** Whether this runtime's VideoDecoder takes `config` (cached per codec string); false without WebCodecs. */
  static isSupported(config: VideoDecoderConfig): Promise<boolean> {
    if (typeof VideoDecoder === 'undefined') return Promise.resolve(false);
    const codec = typeof config?.codec === 'string' ? config.codec : '';
    let known = supportCache.get(codec);
    if (!known) {
      known = VideoDecoder.isConfigSupported(config).then(
        (s) => s.supported === true,
        () => false,
      );
      supportCache.set(codec, known);
    }
    return known;
  }

  static async create(device: GPUDevice, options: ClipDecoderOptions = {}): Promise<WebCodecsClipDecoder> {
    const o = new OptionChecker('WebCodecsClipDecoder.create options', options, ['decoders', 'decodeQueueSize', 'route']);
    const decoders = o.integer('decoders', 2, 1, 16);
    const queueSize = o.integer('decodeQueueSize', 8, 1, 256);
    const route = o.raw('route') === undefined ? undefined : o.oneOf('route', 'external', ['external', 'copy', 'bitmap']);
    if (typeof VideoDecoder === 'undefined') throw new DecodeError('module-unavailable', 'this runtime has no WebCodecs VideoDecoder');
    const pass = await FramePass.create(device, route ? { route } : {});
    return new WebCodecsClipDecoder(pass, decoders, queueSize);
  }

  /** The route frames take to the GPU now ('bitmap' on SwiftShader). */
  get route(): FrameRoute {
    return this.#pass.route;
  }

  /**
   * Writes, for each wanted time t (µs, any order, repeats allowed), the frame shown at t: the last
   * frame whose timestamp ≤ t, or the first frame for a t before it; a t past the last frame gets the
   * last frame. Slot i is `out.firstFrame + i`. Decoding stops once every time is settled. Rejects
   * with a DecodeError: 'unknown-format' (config not supported), 'corrupt' (the decoder failed),
   * 'bad-request' (crop outside the frame), 'cancelled' (signal), 'closed'; OptionError for bad
   * arguments.
   */
  decodeClip(clip: EncodedClip, wantUs: Float64Array, out: ClipFrameTarget, signal?: AbortSignal): Promise<DecodedClip> {
    const job = this.#decode(clip, wantUs, out, signal);
    this.#running.add(job);
    const forget = () => this.#running.delete(job);
    job.then(forget, forget);
    return job;
  }

  async #decode(clip: EncodedClip, wantUs: Float64Array, out: ClipFrameTarget, signal?: AbortSignal): Promise<DecodedClip> {
    if (this.#closing.signal.aborted) throw new DecodeError('closed', 'WebCodecsClipDecoder closed');
    const where = 'WebCodecsClipDecoder.decodeClip';
    if (!(wantUs instanceof Float64Array) || wantUs.length > MAX_WANTED || wantUs.some((t) => !Number.isFinite(t)))
      throw new OptionError(where, 'wantUs', wantUs, `a Float64Array of up to ${MAX_WANTED} finite times`);
    if (typeof clip !== 'object' || clip === null || !Array.isArray(clip.chunks) || typeof clip.config?.codec !== 'string')
      throw new OptionError(where, 'clip', clip, 'an EncodedClip { config, chunks }');
    const norm = checkTarget(`${where} out`, out, wantUs.length);
    const bindable = this.#pass.device.limits.maxStorageBufferBindingSize;
    if (out.buffer.size > bindable)
      throw new OptionError(
        `${where} out`,
        'buffer',
        out.buffer.size,
        `a buffer of at most ${bindable} bytes (the device's storage binding limit)`,
      );
    if (wantUs.length === 0) return { timestampsUs: new Float64Array(0), framesWritten: 0, chunksFed: 0 };
    if (clip.chunks.length === 0) throw new DecodeError('empty', 'the clip has no chunks');
    if (!(await WebCodecsClipDecoder.isSupported(clip.config)))
      throw new DecodeError('unknown-format', `VideoDecoder does not support ${JSON.stringify(clip.config.codec)}`);
    const stop = signal ? AbortSignal.any([signal, this.#closing.signal]) : this.#closing.signal;
    let decoder: PooledDecoder;
    try {
      decoder = await this.#pool.acquire(stop);
    } catch (error) {
      throw error instanceof DecodeError
        ? error
        : new DecodeError('cancelled', 'decodeClip aborted while waiting for a decoder', { cause: error });
    }
    const order = Uint32Array.from(wantUs.keys()).sort((a, b) => (wantUs[a] as number) - (wantUs[b] as number) || a - b);
    const slots = order.map((i) => out.firstFrame + i);
    const pass = new ClipPass(this.#pass, out, slots, norm);
    try {
      return await decoder.run(clip, new ClipRun(wantUs, order, pass), this.#queueSize, stop);
    } finally {
      pass.close();
      this.#pool.release(decoder);
    }
  }

  /** Ends running clips with DecodeError 'closed', waits for them, and closes every decoder. */
  async close(): Promise<void> {
    if (!this.#closing.signal.aborted) this.#closing.abort(new DecodeError('closed', 'WebCodecsClipDecoder closed'));
    await Promise.allSettled([...this.#running]);
    for (const d of this.#pool.slots) d.close();
    this.#pass.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
