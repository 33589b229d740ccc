// Clips of one video that need some of the same frames, decoded in one job. Each clip decoded on
// its own starts at its keyframe; two clips in one GOP (or clips whose spans cross) would decode
// the frames they share twice. A SharedClipDecode gives the packets of all its clips to one video
// job that writes every member's frames into a staging block of the pool's memory; each member's
// fill then copies its part into its own slot (a slot is assigned per clip by the batcher, so the
// job cannot write there itself: later members may not have a slot yet when it runs).
//
// The job is started by whichever member is filled first and awaited by the others. Should it
// fail, each member decodes alone from the same packets, so a clip fails or succeeds as it would
// have without sharing: one broken clip never takes its neighbours down with it. The staging
// block is freed when the last member has taken its part, or by close() (a pass that stopped
// before every member was filled), and never while the job may still write into it.
import { DecodeError } from './errors.ts';
import { frameCount, timeLimitMs, type DecodedVideoInfo, type VideoDecodeOptions } from './media.ts';
import type { VideoPackets } from './packets.ts';
import type { DecodePool } from './pool.ts';

/** The largest wall-clock limit a job takes (media.ts's timeLimitMs). */
const MAX_TIME_LIMIT_MS = 0x7fffffff;

/** The decode options of every member (the frames are each member's own). */
export type SharedClipOptions = Omit<VideoDecodeOptions, 'frames'>;

/** One clip of a shared decode: what a clip's `bytes` may be instead of its own packets. */
export class SharedClip {
  constructor(
    readonly decode: SharedClipDecode,
    readonly member: number,
  ) {}
}

/**
 * One decode for several clips of a video. `packets` must hold every member's frames (read with
 * readClipPackets for the members' times together); `members[i]` are member i's frames' own times
 * (s), each member the same number of frames.
 */
export class SharedClipDecode {
  readonly #pool: DecodePool;
  /** The pool the job runs on and the staging block lives in: the batcher's. */
  get pool(): DecodePool {
    return this.#pool;
  }

  readonly #packets: VideoPackets;
  readonly #members: readonly Float64Array[];
  readonly #frames: number;
  #left: number;
  #staging = 0;
  #optionsKey: string | undefined;
  #job: Promise<DecodedVideoInfo> | undefined;
  #settled = true;
  #closed = false;
  readonly #onDone: (() => void) | undefined;

  /** `onDone` runs once, when every member has been filled or close() was called. */
  constructor(pool: DecodePool, packets: VideoPackets, members: ReadonlyArray<ArrayLike<number>>, onDone?: () => void) {
    const frames = members[0]?.length ?? 0;
    if (members.length < 1 || members.some((m) => m.length !== frames))
      throw new DecodeError('bad-request', 'SharedClipDecode: one or more members, each with the same number of frames');
    frameCount({ frameTimes: new Array<number>(frames * members.length) });
    this.#pool = pool;
    this.#packets = packets;
    this.#members = members.map((m) => Float64Array.from(m));
    this.#frames = frames;
    this.#left = members.length;
    this.#onDone = onDone;
  }

  get size(): number {
    return this.#members.length;
  }

  /** Member `i`'s handle, to be given as its clip's `bytes`. */
  clip(i: number): SharedClip {
    if (!Number.isInteger(i) || i < 0 || i >= this.#members.length)
      throw new DecodeError('bad-request', `SharedClipDecode: no member ${i} of ${this.#members.length}`);
    return new SharedClip(this, i);
  }

  /**
   * Member `i`'s frames into `target` (frames × height × width × channels bytes of the pool's
   * memory), from the shared job; the first member to ask starts it. Each member is filled once.
   */
  async decodeInto(i: number, target: number, options: SharedClipOptions, signal?: AbortSignal): Promise<DecodedVideoInfo> {
    if (!Number.isInteger(i) || i < 0 || i >= this.#members.length)
      throw new DecodeError('bad-request', `SharedClipDecode: no member ${i} of ${this.#members.length}`);
    if (this.#closed) throw new DecodeError('closed', 'SharedClipDecode: closed before this clip was filled');
    const frames = this.#frames;
    const slotBytes = frames * options.height * options.width * (options.channels ?? 3);
    try {
      const key = JSON.stringify(options);
      if (this.#optionsKey !== undefined && key !== this.#optionsKey)
        throw new DecodeError('bad-request', 'SharedClipDecode: every member is decoded with the same options');
      this.#optionsKey = key;
      let info: DecodedVideoInfo;
      try {
        info = await this.#start(slotBytes, options, signal);
      } catch (error) {
        if (signal?.aborted || this.#closed) throw error;
        // Alone, as without sharing: this clip's own failure (or its frames) and no one else's.
        return await this.#pool.decodeVideo(
          this.#packets,
          target,
          { ...options, frames: { frameTimes: Array.from(this.#members[i] ?? []) } },
          signal,
        );
      }
      if (this.#closed) throw new DecodeError('closed', 'SharedClipDecode: closed while the clip was decoded');
      const from = this.#staging + i * slotBytes;
      new Uint8Array(this.#pool.memory.buffer).copyWithin(target, from, from + slotBytes);
      const timestamps = info.timestamps.slice(i * frames, (i + 1) * frames);
      let written = 0;
      for (const t of timestamps) if (!Number.isNaN(t)) written++;
      return { ...info, framesWritten: written, timestamps };
    } finally {
      if (--this.#left === 0) this.close();
    }
  }

  /** Frees the staging block (once the job, if running, has stopped writing into it); later fills fail. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#settled) this.#free();
    this.#onDone?.();
  }

  #start(slotBytes: number, options: SharedClipOptions, signal?: AbortSignal): Promise<DecodedVideoInfo> {
    if (this.#job) return this.#job;
    const members = this.#members.length;
    this.#staging = this.#pool.malloc(slotBytes * members);
    const times: number[] = [];
    for (const m of this.#members) for (const t of m) times.push(t);
    // The job does the work of `members` clips: its limit grows with them (0 stays no limit).
    const limit = timeLimitMs(options.timeLimitMs);
    const request = { ...options, frames: { frameTimes: times }, timeLimitMs: Math.min(limit * members, MAX_TIME_LIMIT_MS) };
    this.#settled = false;
    this.#job = this.#pool.decodeVideo(this.#packets, this.#staging, request, signal).finally(() => {
      this.#settled = true;
      if (this.#closed) this.#free();
    });
    return this.#job;
  }

  #free(): void {
    if (this.#staging === 0) return;
    this.#pool.free(this.#staging);
    this.#staging = 0;
  }
}
