// One WebCodecs VideoDecoder of WebCodecsClipDecoder's pool, and one clip's run on it: chunks fed in
// decode order with at most `queueSize` queued in the decoder, frames taken in presentation order,
// each written to the slots whose wanted time it is the frame shown at, then closed.
import { DecodeError } from '../decode/index.ts';
import type { ClipPass } from './frame-pass.ts';

/** A clip as the demuxer gives it: the decoder's config and the chunks in decode order, a key frame first. */
export interface EncodedClip {
  config: VideoDecoderConfig;
  chunks: readonly EncodedClipChunk[];
}

export interface EncodedClipChunk {
  key: boolean;
  /** Presentation time and duration in µs from the stream's start. */
  timestampUs: number;
  durationUs: number;
  data: Uint8Array;
}

export interface DecodedClip {
  /** Per wanted time (in the caller's order): the timestamp of the frame written to its slot. */
  timestampsUs: Float64Array;
  /** Distinct frames written (one dispatch each). */
  framesWritten: number;
  /** Chunks given to the decoder: fewer than the clip's when the wanted times were settled early. */
  chunksFed: number;
}

/** Frames waiting for their pass at once (the bitmap route is asynchronous); feeding waits beyond it. */
const MAX_PENDING_WRITES = 4;

/** A pooled VideoDecoder; a decoder that failed (and so closed itself) is replaced before the next clip. */
export class PooledDecoder {
  #decoder: VideoDecoder;
  #run: ClipRun | undefined;

  constructor() {
    this.#decoder = this.#make();
  }

  get decoder(): VideoDecoder {
    return this.#decoder;
  }

  #make(): VideoDecoder {
    const decoder = new VideoDecoder({
      output: (frame) => {
        if (this.#run) this.#run.onFrame(frame);
        else frame.close();
      },
      error: (error) => this.#run?.fail(new DecodeError('corrupt', `VideoDecoder: ${error.message}`, { cause: error })),
    });
    decoder.addEventListener('dequeue', () => this.#run?.wake());
    return decoder;
  }

  /** Decodes one clip; the decoder is left unconfigured (or replaced) for the next. */
  async run(clip: EncodedClip, run: ClipRun, queueSize: number, signal: AbortSignal): Promise<DecodedClip> {
    if (this.#decoder.state === 'closed') this.#decoder = this.#make();
    this.#run = run;
    const onAbort = () => {
      run.fail(run.abortError(signal));
      this.#stop();
    };
    signal.addEventListener('abort', onAbort);
    try {
      if (signal.aborted) throw run.abortError(signal);
      await run.feed(this.#decoder, clip, queueSize);
      return await run.finish();
    } finally {
      signal.removeEventListener('abort', onAbort);
      // Queued chunks and frames not yet out are dropped; the decoder can take the next clip.
      if (this.#decoder.state !== 'closed') this.#decoder.reset();
      run.discard();
      await run.settled();
      this.#run = undefined;
      if (this.#decoder.state === 'closed') this.#decoder = this.#make();
    }
  }

  /** Drops queued work at once, so a pending flush() rejects and the run ends. */
  #stop(): void {
    if (this.#decoder.state === 'configured') this.#decoder.reset();
  }

  /** Closes the decoder (call once no run is in progress). */
  close(): void {
    if (this.#decoder.state !== 'closed') this.#decoder.close();
  }
}

/** One clip's state: which wanted times are settled, the frame held until its successor shows. */
export class ClipRun {
  readonly #want: Float64Array;
  /** Indices of `want` sorted by time: the order frames settle them in. */
  readonly #order: Uint32Array;
  readonly #pass: ClipPass;
  readonly #timestamps: Float64Array;
  #next = 0;
  #held: VideoFrame | undefined;
  #heldUs = 0;
  #framesWritten = 0;
  #chunksFed = 0;
  #pending = 0;
  #writes: Promise<void> = Promise.resolve();
  #error: Error | undefined;
  #finished = false;
  #wake: (() => void) | undefined;

  constructor(want: Float64Array, order: Uint32Array, pass: ClipPass) {
    this.#want = want;
    this.#order = order;
    this.#pass = pass;
    this.#timestamps = new Float64Array(want.length);
  }

  abortError(signal: AbortSignal): DecodeError {
    const reason: unknown = signal.reason;
    if (reason instanceof DecodeError) return reason;
    return new DecodeError('cancelled', 'decodeClip aborted', { cause: reason });
  }

  /** The first failure wins; feeding stops and the clip rejects with it. */
  fail(error: Error): void {
    this.#error ??= error;
    this.wake();
  }

  wake(): void {
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  }

  get #done(): boolean {
    return this.#error !== undefined || this.#next === this.#order.length;
  }

  async feed(decoder: VideoDecoder, clip: EncodedClip, queueSize: number): Promise<void> {
    try {
      decoder.configure(clip.config);
    } catch (error) {
      throw new DecodeError('unknown-format', `VideoDecoder.configure: ${(error as Error).message}`, { cause: error });
    }
    for (const chunk of clip.chunks) {
      while (!this.#done && (decoder.decodeQueueSize >= queueSize || this.#pending >= MAX_PENDING_WRITES))
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
      if (this.#done) break;
      try {
        const type = chunk.key ? 'key' : 'delta';
        decoder.decode(new EncodedVideoChunk({ type, timestamp: chunk.timestampUs, duration: chunk.durationUs, data: chunk.data }));
      } catch (error) {
        throw new DecodeError('corrupt', `VideoDecoder.decode: ${(error as Error).message}`, { cause: error });
      }
      this.#chunksFed++;
    }
    if (this.#done) return;
    // flush() rejects after an error callback or a reset (abort): that reason is in #error.
    await decoder.flush().catch((error: unknown) => this.fail(new DecodeError('corrupt', `VideoDecoder.flush: ${String(error)}`)));
  }

  /** After the flush: the held frame serves every time past it. */
  async finish(): Promise<DecodedClip> {
    if (!this.#done) {
      const held = this.#held;
      this.#held = undefined;
      if (held) this.#settle(held, this.#heldUs, Number.POSITIVE_INFINITY);
      else this.fail(new DecodeError('corrupt', 'the decoder gave no frame for this clip'));
    }
    await this.settled();
    if (this.#error) throw this.#error;
    return { timestampsUs: this.#timestamps, framesWritten: this.#framesWritten, chunksFed: this.#chunksFed };
  }

  onFrame(frame: VideoFrame): void {
    const ts = frame.timestamp;
    // Settled, failed, or out of presentation order (which the definition has no place for).
    if (this.#finished || this.#done || (this.#held && ts <= this.#heldUs)) {
      frame.close();
      return;
    }
    const held = this.#held;
    const heldUs = this.#heldUs;
    this.#held = frame;
    this.#heldUs = ts;
    if (held) this.#settle(held, heldUs, ts);
    if (this.#done) {
      this.#held = undefined;
      frame.close();
      this.wake();
    }
  }

  /** `frame` (shown from `frameUs`) serves every unsettled time before `untilUs`; closed if none. */
  #settle(frame: VideoFrame, frameUs: number, untilUs: number): void {
    const begin = this.#next;
    const order = this.#order;
    while (this.#next < order.length && (this.#want[order[this.#next] as number] as number) < untilUs) {
      this.#timestamps[order[this.#next] as number] = frameUs;
      this.#next++;
    }
    const count = this.#next - begin;
    if (count === 0) {
      frame.close();
      return;
    }
    this.#framesWritten++;
    this.#pending++;
    this.#writes = this.#writes.then(async () => {
      try {
        if (this.#error) frame.close();
        else await this.#pass.write(frame, begin, count);
      } catch (error) {
        this.fail(error instanceof Error ? error : new DecodeError('corrupt', String(error)));
      } finally {
        this.#pending--;
        this.wake();
      }
    });
  }

  /** No frame is taken from now on; the held one is closed. */
  discard(): void {
    this.#finished = true;
    this.#held?.close();
    this.#held = undefined;
  }

  /** Settles when every frame handed to a pass has been submitted or closed. */
  settled(): Promise<void> {
    return this.#writes;
  }
}
