import { RawBlocks } from './raw-blocks.ts';
import {
  FORMAT_NAMES,
  JOB_BYTES,
  JOB_MESSAGE_BYTES,
  JOB_WORDS,
  MAX_BATCH_BYTES,
  STATUS_CODES,
  STREAM_WORDS,
  Field,
  JobKind,
  JobState,
} from './abi.ts';
import { canShareMemory, type DecodeBackend, type DecodeMode, type JobSlot } from './backend.ts';
import { DecodeError } from './errors.ts';
import {
  fillAudio,
  fillVideo,
  frameCount,
  readAudio,
  readVideo,
  type AudioDecodeOptions,
  type DecodedAudioInfo,
  type DecodedVideoInfo,
  type VideoDecodeOptions,
} from './media.ts';
import { writeRandomCrop, writeResize, type ImageDecodeOptions } from './options.ts';
import { checkDemuxOptions, fillDemux, readDemux, type DemuxedVideo, type VideoDemuxOptions } from './demux.ts';
import { initStreamRecord, StreamServer, type ByteSource } from './stream.ts';
import { isVideoPackets, packetsInput, type VideoPackets } from './packets.ts';
import { PthreadBackend } from './threads.ts';
import { WorkerBackend } from './workers.ts';
import { SlotPool } from '../sync/index.ts';
import { OptionChecker } from '../errors/index.ts';

export type { ImageDecodeOptions, RandomCropOptions, ResizeOptions } from './options.ts';
export type { DecodeMode } from './backend.ts';

export interface DecodedImageInfo {
  format: (typeof FORMAT_NAMES)[number];
  sourceWidth: number;
  sourceHeight: number;
  /**
   * How much smaller than its full size the JPEG was decoded, 8/M for M in 1..8 (1: full size):
   * its IDCT scaled by M/8, the least that still covers the target, before the resize.
   */
  reducedScale: number;
  orientation: number;
  /**
   * The pixels actually decoded, out of the whole frame at the decode's scale: for a JPEG only the
   * window the output reads (crop, cover, random crop), rounded out to whole iMCUs; for other
   * formats, and with `decodeWindow: false`, the whole frame.
   */
  decoded: { width: number; height: number; frameWidth: number; frameHeight: number };
  /** True when a pool pthread, not the caller's thread, did the work. */
  onPoolThread: boolean;
  /** Milliseconds of wall clock the thread spent on this image, from taking the job to finishing it. */
  threadMs: number;
  /** With `randomCrop`: the box drawn, in oriented source pixels, and whether the output was mirrored. */
  crop?: { x: number; y: number; width: number; height: number };
  flipped?: boolean;
}

export interface DecodePoolStats {
  /** 'pthreads' (threads sharing one memory) or 'workers' (the fallback without SharedArrayBuffer). */
  mode: DecodeMode;
  threads: number;
  inFlight: number;
  queued: number;
  completed: number;
  failed: number;
  /**
   * Threads held by a job that ran past its time limit plus a grace period. Such a job's caller
   * got an 'over-budget' error; the thread (and the job's record) come back if it ever finishes.
   * When every thread is held, new jobs fail at once with 'stalled'.
   */
  stuckThreads: number;
  /** Worker threads alive right now: `threads` while open, 0 once close() has resolved. */
  liveWorkers: number;
  /**
   * Bytes of the pool's wasm memory in use, as its allocator counts them: batch buffers, job
   * records, input copies (in 'workers' mode, the memory holding records and batch buffers).
   * Stable between runs of the same loader; growth from run to run is memory left behind.
   */
  heapBytes: number;
  /**
   * Milliseconds the pool's threads spent on jobs, summed over every job that finished (decoded or
   * failed), not counting their wait in the queue. Against `threads` × the elapsed time it says how
   * busy the threads were: near 1, decoding is the limit; well below, the threads waited for work.
   */
  threadMs: number;
}

/** A job the watchdog is timing: from when a thread takes it, against its time limit. */
interface WatchedJob {
  slot: JobSlot;
  limitMs: number;
  runningSince: number | undefined;
  overdue: (error: DecodeError) => void;
}

/** How often the watchdog looks at running jobs, and how long past its limit a job may run. */
const WATCHDOG_TICK_MS = 1000;
const WATCHDOG_GRACE_MS = 5000;
/** The watchdog's limit for image jobs, which carry no time limit of their own. */
const IMAGE_WATCHDOG_MS = 60_000;

export interface VideoStreamOptions extends VideoDecodeOptions {
  /** Bytes read from the source at a time, and the most input held in wasm memory (default 1 MiB). */
  windowBytes?: number;
  readTimeoutMs?: number;
}

const NO_BYTES = new Uint8Array(0);

export interface DecodePoolOptions {
  /** Pool threads (default 2). Each decodes one image at a time. */
  threads?: number;
  /** Job records: requests beyond these wait in JS before reaching a thread (default 4 × threads). */
  maxInFlight?: number;
  /**
   * 'auto' (default): pthreads where memory can be shared (Node, Deno, cross-origin isolated
   * pages), else one single-threaded instance per worker. The other values force a mode.
   */
  mode?: DecodeMode | 'auto';
  /**
   * The folder URL the decode modules are served from (`tandem-decode.mjs`, `tandem-decode.wasm`
   * and their `-st` pair, as in the package's `wasm/dist/`), for hosts that serve them apart from
   * the package's JavaScript: a self-hosted mirror, a page that copies them elsewhere. Default:
   * the package's own `wasm/dist/`, found from its modules' URLs (also when imported from a CDN).
   */
  moduleBase?: string | URL;
  /**
   * Where the pool's warnings go: the decoder's own diagnostics and a fallback worker that could
   * not be replaced (default: console.warn with a "[tandem decode]" prefix).
   */
  onWarning?: (message: string) => void;
}

/**
 * Decodes images, audio and video on a pool of wasm threads. The event loop only fills a job
 * record and awaits its completion; decoding, resizing and colour conversion run on the pool's
 * threads and land in the caller's target (normally one slot of a batch buffer in the pool's
 * memory): directly with pthreads, through one copy in the worker fallback.
 */
export class DecodePool {
  readonly threads: number;
  readonly mode: DecodeMode;
  /**
   * The requests the pool takes at once, and the concurrency to give the stage that decodes
   * (`concurrency: pool.maxInFlight`). Keeping several per thread queued matters when the threads
   * use every core: a thread that finishes takes its next job at once instead of waiting for the
   * event loop to be scheduled. On 2 cores, 2 requests per thread delivered about 15% fewer images/s
   * in the photo loader than 4 (docs/bench/loader.md).
   */
  readonly maxInFlight: number;
  #backend: DecodeBackend;
  readonly #blocks = new RawBlocks();
  /** The job records requests fill in; one per request in flight. */
  #slots: SlotPool<JobSlot>;
  #inFlight = 0;
  #completed = 0;
  #failed = 0;
  #threadUs = 0;
  #closed = false;
  #stuck = 0;
  /** close() waiting for the requests in flight (other than stuck ones) to end. */
  #idle: Array<() => void> = [];
  #watched = new Set<WatchedJob>();
  #keepAlive: ReturnType<typeof setInterval> | undefined;

  private constructor(backend: DecodeBackend, maxInFlight: number) {
    this.#backend = backend;
    this.threads = backend.threads;
    this.mode = backend.mode;
    this.maxInFlight = maxInFlight;
    const slots: JobSlot[] = [];
    for (let i = 0; i < maxInFlight; i++) {
      const ptr = backend.malloc(JOB_BYTES);
      slots.push({
        ptr,
        words: new Int32Array(backend.memory.buffer, ptr, JOB_WORDS),
        input: 0,
        inputCapacity: 0,
        aux: 0,
        auxWords: 0,
      });
    }
    this.#slots = new SlotPool(slots);
  }

  static async create(options: DecodePoolOptions = {}): Promise<DecodePool> {
    const o = new OptionChecker('DecodePool.create options', options, ['threads', 'maxInFlight', 'mode', 'moduleBase', 'onWarning']);
    const threads = o.integer('threads', 2, 1, 256);
    o.optionalInteger('maxInFlight', 1, 65536);
    const requested = o.oneOf('mode', 'auto', ['auto', 'pthreads', 'workers']);
    const base0 = o.raw('moduleBase');
    if (base0 !== undefined && typeof base0 !== 'string' && !(base0 instanceof URL)) o.fail('moduleBase', 'a URL or a string');
    if (options.onWarning !== undefined && typeof options.onWarning !== 'function') o.fail('onWarning', 'a function');
    const mode = requested === 'auto' ? (canShareMemory() ? 'pthreads' : 'workers') : requested;
    const warn = options.onWarning ?? ((message: string) => console.warn(`[tandem decode] ${message}`));
    const base = options.moduleBase === undefined ? undefined : moduleFolder(options.moduleBase);
    const backend =
      mode === 'pthreads' ? await PthreadBackend.create(threads, warn, base) : await WorkerBackend.create(threads, warn, base);
    return new DecodePool(backend, Math.max(threads, options.maxInFlight ?? threads * 4));
  }

  /**
   * The memory every buffer of this pool lives in: shared by the threads in 'pthreads' mode. In
   * 'workers' mode it is not shared and may be replaced when it grows (on `allocate`), so take
   * views after allocating.
   */
  get memory(): WebAssembly.Memory {
    return this.#backend.memory;
  }

  /**
   * Allocates `bytes` in the pool's memory as a handle to decode into: `bytes` reads it (a view
   * taken afresh whenever the memory has grown), `free()` or `using` gives it back. The decode
   * calls take the handle as their target and refuse a request larger than it.
   */
  allocate(bytes: number): PoolBuffer {
    return new PoolBuffer(this, this.malloc(bytes), bytes);
  }

  /**
   * The raw form of allocate: the block's address in the pool's memory (what `ptr` of a handle
   * is), freed with `free`. For code that lays out its own buffers, such as ImageBatcher's batches.
   */
  malloc(bytes: number): number {
    // wasm's malloc takes 32 bits: a larger size would wrap to a small block recorded as a large one.
    if (!Number.isInteger(bytes) || bytes < 0 || bytes > MAX_BATCH_BYTES)
      throw new DecodeError('bad-request', `malloc(${bytes}): a whole number of bytes up to ${MAX_BATCH_BYTES}`);
    const ptr = this.#backend.malloc(bytes);
    this.#blocks.add(ptr, bytes);
    return ptr;
  }

  /** Gives back a block from `malloc`; any other address (or the same one twice) is refused. */
  free(ptr: number): void {
    if (!this.#blocks.remove(ptr))
      throw new DecodeError('bad-request', `free(${ptr}): not a live block from this pool's malloc (freed twice?)`);
    this.#backend.free(ptr);
  }

  /** The target's address; a target too small for the request is refused before any job starts. */
  #targetAddress(target: DecodeTarget, needed: number): number {
    if (this.#closed) throw new DecodeError('closed', 'the decode pool is closed');
    const bytes = Number.isFinite(needed) ? needed : 0;
    if (typeof target !== 'number') {
      if (bytes > target.length)
        throw new DecodeError('bad-request', `the request needs ${bytes} bytes; the target holds ${target.length}`);
      if (target.freed) throw new DecodeError('bad-request', 'the target has been freed');
      return target.ptr;
    }
    if (!(Number.isInteger(target) && this.#blocks.holds(target, bytes)))
      throw new DecodeError(
        'bad-request',
        `target ${target}: ${bytes} bytes from there are not inside one live block from this pool's malloc`,
      );
    return target;
  }

  /**
   * Decodes `bytes` into `target` (height × width × channels bytes in this pool's memory: a handle
   * from allocate, or a raw address). Resolves with what the decoder saw, or rejects with a
   * DecodeError for this item only.
   */
  async decodeInto(bytes: Uint8Array, target: DecodeTarget, options: ImageDecodeOptions, signal?: AbortSignal): Promise<DecodedImageInfo> {
    const targetPtr = this.#targetAddress(target, options.width * options.height * (options.channels ?? 3));
    return this.#run(
      bytes,
      signal,
      (w) => fillImage(w, targetPtr, options),
      (slot) => this.#result(slot),
    );
  }

  /**
   * One image, decoded into a new array of its own: for callers that do not batch. The pixels are
   * `height × width × channels` bytes (RGB unless `options.channels` says otherwise), copied out of
   * the pool's memory, so they stay valid whatever the pool does next.
   */
  async decode(
    bytes: Uint8Array,
    options: ImageDecodeOptions,
    signal?: AbortSignal,
  ): Promise<{ pixels: Uint8Array; info: DecodedImageInfo }> {
    const size = options.width * options.height * (options.channels ?? 3);
    if (!(Number.isInteger(size) && size > 0)) throw new DecodeError('bad-request', 'width, height and channels must be positive integers');
    const target = this.malloc(size);
    try {
      const info = await this.decodeInto(bytes, target, options, signal);
      return { pixels: new Uint8Array(this.memory.buffer, target, size).slice(), info };
    } finally {
      this.free(target);
    }
  }

  /**
   * Decodes the audio of a whole in-memory file (MP3, AAC/M4A, WAV, FLAC, Ogg Opus/Vorbis, or the
   * audio of an MP4/WebM) into `targetPtr`: `maxFrames` × `channels` f32 samples, interleaved,
   * resampled to `sampleRate` and mixed to `channels`. Samples past the end are zero.
   */
  async decodeAudio(bytes: Uint8Array, target: DecodeTarget, options: AudioDecodeOptions, signal?: AbortSignal): Promise<DecodedAudioInfo> {
    const targetPtr = this.#targetAddress(target, options.maxFrames * options.channels * 4);
    return this.#run(
      bytes,
      signal,
      (w) => fillAudio(w, targetPtr, options),
      (slot) => this.#media(slot, readAudio),
    );
  }

  /**
   * Decodes the frames chosen by `options.frames` of a whole in-memory video (MP4/MOV, WebM, MKV;
   * H.264, HEVC, VP8, VP9) into consecutive height × width × channels u8 slots starting at `targetPtr`
   * (an NHWC clip of `frameCount(options.frames)` frames). Slots without a frame are zero.
   * `input` may instead be a clip's packets cut from the container (VideoPackets: an MP4's index,
   * read with readMp4Index and readClipPackets); no container is then opened, and the frames are
   * picked by `frameTimes`.
   */
  async decodeVideo(
    input: Uint8Array | VideoPackets,
    target: DecodeTarget,
    options: VideoDecodeOptions,
    signal?: AbortSignal,
  ): Promise<DecodedVideoInfo> {
    const targetPtr = this.#targetAddress(target, clipBytes(options));
    if (!isVideoPackets(input)) return this.#video(input, targetPtr, options, signal);
    // Packets cut from the container: no container to seek in, so the frames are picked by their own times.
    if (!('frameTimes' in options.frames)) throw new DecodeError('bad-request', 'a clip given as packets picks its frames by frameTimes');
    const packets = packetsInput(input);
    return this.#video(packets.bytes, targetPtr, options, signal, packets.fill);
  }

  /**
   * decodeVideo for long files: the pool thread reads `source` a window at a time (`windowBytes`,
   * default 1 MiB) while it decodes, so the file is never held whole. Needs the pthreads mode.
   * A failing or slow source (`readTimeoutMs`, default 30 s) fails this item with a DecodeError.
   */
  async decodeVideoStream(
    source: ByteSource,
    target: DecodeTarget,
    options: VideoStreamOptions,
    signal?: AbortSignal,
  ): Promise<DecodedVideoInfo> {
    if (this.mode !== 'pthreads')
      throw new DecodeError(
        'bad-request',
        'streamed decoding needs the pthreads mode (SharedArrayBuffer); decode the whole file with decodeVideo',
      );
    const targetPtr = this.#targetAddress(target, clipBytes(options));
    const capacity = Math.floor(options.windowBytes ?? 1 << 20);
    if (!(capacity >= 4096 && capacity <= 1 << 30)) throw new DecodeError('bad-request', 'windowBytes must be between 4 KiB and 1 GiB');
    return this.#streamed(source, capacity, options.readTimeoutMs, signal, (record) =>
      this.#video(NO_BYTES, targetPtr, options, signal, (w) => {
        w[Field.Kind] = JobKind.VideoStream;
        w[Field.Src] = record;
      }),
    );
  }

  /**
   * The packets of a video's best stream, undecoded, with what a WebCodecs VideoDecoder needs to
   * take them (codec string, description, coded size), or (`packets: false`) only every frame's
   * times and key flags. `input` is the whole file, or a ByteSource read a window at a time as
   * decodeVideoStream reads it (pthreads mode only). Bad options throw an OptionError; a bad file
   * or a limit rejects with a DecodeError for this item only.
   */
  async demuxVideo(input: Uint8Array | ByteSource, options: VideoDemuxOptions = {}, signal?: AbortSignal): Promise<DemuxedVideo> {
    const { windowBytes, readTimeoutMs } = checkDemuxOptions(options);
    if (input instanceof Uint8Array) return this.#demux(input, options, signal);
    if (this.mode !== 'pthreads')
      throw new DecodeError(
        'bad-request',
        'streamed demuxing needs the pthreads mode (SharedArrayBuffer); pass the whole file as a Uint8Array',
      );
    return this.#streamed(input, windowBytes, readTimeoutMs, signal, (record) => this.#demux(NO_BYTES, options, signal, record));
  }

  #demux(bytes: Uint8Array, options: VideoDemuxOptions, signal?: AbortSignal, streamRecord?: number): Promise<DemuxedVideo> {
    return this.#run(
      bytes,
      signal,
      (words) => fillDemux(words, options, streamRecord),
      (slot) => this.#media(slot, (w) => readDemux(w, this.memory.buffer)),
      (slot) => {
        // The result block is malloc'd by the C side (or, in workers mode, by the backend for its copy).
        const words = new Int32Array(this.memory.buffer, slot.ptr, JOB_WORDS);
        const block = words[Field.Result] ?? 0;
        words[Field.Result] = 0;
        if (block) this.#backend.free(block);
      },
    );
  }

  /** Runs `job` on a stream record whose window the event loop fills from `source` meanwhile. */
  async #streamed<T>(
    source: ByteSource,
    capacity: number,
    readTimeoutMs: number | undefined,
    signal: AbortSignal | undefined,
    job: (record: number) => Promise<T>,
  ): Promise<T> {
    const record = this.malloc(STREAM_WORDS * 4 + capacity);
    const server = new StreamServer(source, () => this.memory.buffer, record);
    if (readTimeoutMs) server.readTimeoutMs = readTimeoutMs;
    initStreamRecord(this.memory.buffer, record, record + STREAM_WORDS * 4, capacity, source.size);
    const serving = server.serve(signal);
    try {
      return await job(record);
    } catch (error) {
      if (server.failure === undefined || signal?.aborted) throw error;
      throw new DecodeError(
        'corrupt',
        `the byte source failed: ${server.failure instanceof Error ? server.failure.message : String(server.failure)}`,
      );
    } finally {
      server.close();
      await serving;
      this.free(record);
    }
  }

  #video(
    bytes: Uint8Array,
    targetPtr: number,
    options: VideoDecodeOptions,
    signal?: AbortSignal,
    stream?: (words: Int32Array) => void,
  ): Promise<DecodedVideoInfo> {
    const count = frameCount(options.frames);
    return this.#run(
      bytes,
      signal,
      (_words, slot) => {
        const aux = this.#aux(slot, 2 * count);
        fillVideo(slot.words, targetPtr, options, aux, new Int32Array(this.memory.buffer, aux, 2 * count));
        stream?.(slot.words);
      },
      (slot) => this.#media(slot, (w) => readVideo(w, new Int32Array(this.memory.buffer, slot.aux, 2 * count).subarray(count))),
    );
  }

  /*
   * One request, from entry to result. Invariants of #run, #release, #leave and #watch:
   * - #inFlight counts the requests that entered #run and have not yet called #leave. Every path
   *   out calls #leave exactly once: directly when no job record was taken, else through #release.
   * - The watchdog interval (#keepAlive) exists exactly while #inFlight > 0: it also keeps Node and
   *   Deno alive, which a pending Atomics.waitAsync does not.
   * - A job record is lent to one request from acquire to #release. It goes back only once no
   *   thread can touch it: after the job completed, or, for a job past its limit, when the job
   *   finally returns (the request has already failed as over-budget; `held` keeps the finally
   *   block from releasing it early).
   * - A job with a time limit is in #watched exactly while it executes and no verdict was given;
   *   #watch starts its clock when the C side marks it RUNNING, and past limit + grace either the
   *   backend abandons it (the fallback terminates its worker) or it counts in #stuck until it
   *   returns. Once #stuck equals the thread count, new requests fail at once as 'stalled'.
   * - An abort ends only the caller's wait; a submitted job cannot be withdrawn.
   * - close() resolves its idle waiters when every request left is a stuck one.
   */
  async #run<T>(
    bytes: Uint8Array,
    signal: AbortSignal | undefined,
    fill: (words: Int32Array, slot: JobSlot) => void,
    read: (slot: JobSlot) => T,
    /** Once the job has completed, whether or not `read` ran: frees what the job allocated. */
    after?: (slot: JobSlot) => void,
  ): Promise<T> {
    if (this.#closed) throw new DecodeError('closed', 'the decode pool is closed');
    signal?.throwIfAborted();
    this.#throwIfStalled();
    // Atomics.waitAsync and emscripten's unref'd workers do not keep Node or Deno alive, so the
    // watchdog's interval also holds the event loop open exactly while decodes are pending.
    if (this.#inFlight++ === 0 && !this.#keepAlive) this.#keepAlive = setInterval(() => this.#watch(), WATCHDOG_TICK_MS);
    let slot: JobSlot;
    try {
      // Waiting for a free job record ends with the signal's reason when it aborts.
      slot = await this.#slots.acquire(signal);
    } catch (error) {
      this.#leave();
      throw error;
    }
    let held = false;
    let ran = false;
    try {
      if (this.#closed) throw new DecodeError('closed', 'the decode pool is closed');
      this.#throwIfStalled();
      // Views of unshared memory die when it grows; the record itself stays where it is.
      if (slot.words.buffer !== this.memory.buffer) slot.words = new Int32Array(this.memory.buffer, slot.ptr, JOB_WORDS);
      slot.words.fill(0);
      fill(slot.words, slot);
      // A job cannot be withdrawn once a thread may hold it; an abort only stops the wait on the
      // result, and the slot is reused after the thread has finished with it.
      const executing = this.#backend.execute(slot, bytes);
      const limitMs = slot.words[Field.Kind] === JobKind.Image ? IMAGE_WATCHDOG_MS : (slot.words[Field.TimeLimitMs] ?? 0);
      if (limitMs > 0) {
        await new Promise<void>((resolve, reject) => {
          const job: WatchedJob = { slot, limitMs, runningSince: undefined, overdue: reject };
          this.#watched.add(job);
          executing.then(resolve, reject).finally(() => this.#watched.delete(job));
        }).catch((error: unknown) => {
          if (!(error instanceof DecodeError && error.code === 'over-budget')) throw error;
          // The job still holds its thread: keep the record away from new jobs until it is done.
          held = true;
          this.#failed++;
          const release = (): void => {
            after?.(slot);
            this.#release(slot, true);
          };
          void executing.then(release, release);
          throw error;
        });
      } else {
        await executing;
      }
      ran = true;
      if (slot.words.buffer !== this.memory.buffer) slot.words = new Int32Array(this.memory.buffer, slot.ptr, JOB_WORDS);
      this.#threadUs += slot.words[Field.ThreadUs] ?? 0;
      signal?.throwIfAborted();
      return read(slot);
    } finally {
      if (ran) after?.(slot);
      if (!held) this.#release(slot, false);
    }
  }

  #release(slot: JobSlot, wasStuck: boolean): void {
    if (wasStuck) this.#stuck--;
    this.#leave();
    this.#slots.release(slot);
  }

  /** One request is no longer in flight: stop the watchdog when none are, wake close() when done. */
  #leave(): void {
    if (--this.#inFlight === 0) {
      clearInterval(this.#keepAlive);
      this.#keepAlive = undefined;
    }
    if (this.#inFlight - this.#stuck <= 0) for (const wake of this.#idle.splice(0)) wake();
  }

  /** One watchdog tick: fails jobs running past their limit plus grace, and stops them if it can. */
  #watch(): void {
    const now = performance.now();
    for (const job of this.#watched) {
      const words =
        job.slot.words.buffer === this.memory.buffer ? job.slot.words : new Int32Array(this.memory.buffer, job.slot.ptr, JOB_WORDS);
      if (job.runningSince === undefined) {
        if (Atomics.load(words, Field.State) === JobState.Running) job.runningSince = now;
        continue;
      }
      if (now - job.runningSince <= job.limitMs + WATCHDOG_GRACE_MS) continue;
      this.#watched.delete(job);
      // A backend that can stop the job completes it as 'over-budget' through the normal path.
      if (this.#backend.abandon(job.slot)) continue;
      this.#stuck++;
      job.overdue(
        new DecodeError(
          'over-budget',
          `the job ran ${Math.round((now - job.runningSince) / 1000)} s, past its limit of ${job.limitMs / 1000} s; its pool thread stays held until it returns`,
        ),
      );
    }
  }

  #throwIfStalled(): void {
    if (this.#stuck >= this.threads) {
      throw new DecodeError(
        'stalled',
        `every one of the ${this.threads} pool threads is held by a job that ran past its time limit; close this pool and create a new one`,
      );
    }
  }

  stats(): DecodePoolStats {
    return {
      mode: this.mode,
      threads: this.threads,
      inFlight: this.#inFlight,
      queued: this.#slots.waiting,
      completed: this.#completed,
      failed: this.#failed,
      stuckThreads: this.#stuck,
      liveWorkers: this.#backend.liveWorkers(),
      heapBytes: this.#closed ? 0 : this.#backend.heapBytes(),
      threadMs: this.#threadUs / 1000,
    };
  }

  /**
   * Stops the threads after the jobs in hand and releases the module; nothing keeps running.
   * Threads held by jobs past their time limit are not waited for: their workers are terminated.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const stopped = this.#backend.close(this.#stuck);
    if (this.#inFlight - this.#stuck > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
    await stopped;
    clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
    this.#watched.clear();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** The slot's side array of `words` i32 (video frame selection and timestamps). */
  #aux(slot: JobSlot, words: number): number {
    if (slot.auxWords < words) {
      if (slot.aux) this.free(slot.aux);
      slot.aux = 0;
      slot.auxWords = 0;
      slot.aux = this.malloc(words * 4);
      slot.words = new Int32Array(this.memory.buffer, slot.ptr, JOB_WORDS);
      slot.auxWords = words;
    }
    return slot.aux;
  }

  #media<T>(slot: JobSlot, read: (words: Int32Array) => T): T {
    this.#throwIfFailed(slot);
    this.#completed++;
    return read(slot.words);
  }

  #throwIfFailed(slot: JobSlot): void {
    const status = slot.words[Field.Status] ?? 0;
    if (status !== 0) {
      this.#failed++;
      const code = STATUS_CODES[status] ?? 'corrupt';
      throw new DecodeError(code === 'ok' ? 'corrupt' : code, readMessage(this.memory, slot.ptr));
    }
  }

  #result(slot: JobSlot): DecodedImageInfo {
    this.#throwIfFailed(slot);
    this.#completed++;
    const w = slot.words;
    return {
      format: FORMAT_NAMES[w[Field.Format] ?? 0] ?? 'unknown',
      sourceWidth: w[Field.SrcW] ?? 0,
      sourceHeight: w[Field.SrcH] ?? 0,
      reducedScale: 8 / Math.max(1, w[Field.ReducedEighths] || 8),
      orientation: w[Field.Orientation] ?? 1,
      decoded: {
        width: w[Field.DecodedW] ?? 0,
        height: w[Field.DecodedH] ?? 0,
        frameWidth: w[Field.FrameW] ?? 0,
        frameHeight: w[Field.FrameH] ?? 0,
      },
      onPoolThread: w[Field.OnPoolThread] === 1,
      threadMs: (w[Field.ThreadUs] ?? 0) / 1000,
      ...(w[Field.RrcScaleHi]
        ? {
            crop: { x: w[Field.CropX] ?? 0, y: w[Field.CropY] ?? 0, width: w[Field.CropW] ?? 0, height: w[Field.CropH] ?? 0 },
            flipped: w[Field.Flipped] === 1,
          }
        : {}),
    };
  }
}

/** A folder URL, ending in '/', so that module names resolve inside it; relative ones against the page. */
function moduleFolder(base: string | URL): URL {
  const href = String(base);
  const location = (globalThis as { location?: { href: string } }).location?.href;
  try {
    return new URL(href.endsWith('/') ? href : `${href}/`, location);
  } catch {
    throw new DecodeError('bad-request', `moduleBase ${JSON.stringify(href)} is not a URL`);
  }
}

/** A block of a DecodePool's memory (see DecodePool.allocate). */
export class PoolBuffer {
  #pool: DecodePool;
  #view: Uint8Array | undefined;
  #freed = false;

  constructor(
    pool: DecodePool,
    readonly ptr: number,
    readonly length: number,
  ) {
    this.#pool = pool;
  }

  get freed(): boolean {
    return this.#freed;
  }

  /** The block's bytes; valid until the next call that may grow the memory, so take it afresh. */
  get bytes(): Uint8Array {
    if (this.#freed) throw new DecodeError('closed', 'this pool buffer has been freed');
    const buffer = this.#pool.memory.buffer;
    if (this.#view?.buffer !== buffer) this.#view = new Uint8Array(buffer, this.ptr, this.length);
    return this.#view;
  }

  /** Gives the block back to the pool (the same as free()). */
  close(): void {
    this.free();
  }

  /** @deprecated The same as close(); use close() (or `using`). */
  free(): void {
    if (this.#freed) return;
    this.#freed = true;
    this.#view = undefined;
    this.#pool.free(this.ptr);
  }

  [Symbol.dispose](): void {
    this.free();
  }
}

/** Where a decode writes: a handle from DecodePool.allocate, or an address inside a block from DecodePool.malloc. */
export type DecodeTarget = number | PoolBuffer;

/** Bytes of the NHWC clip a video request fills. */
function clipBytes(o: VideoDecodeOptions): number {
  return frameCount(o.frames) * o.width * o.height * (o.channels ?? 3);
}

function fillImage(w: Int32Array, targetPtr: number, o: ImageDecodeOptions): void {
  w[Field.Kind] = JobKind.Image;
  writeResize(w, targetPtr, o);
  w[Field.AllowReduced] = o.reducedScale === false ? 0 : 1;
  w[Field.ApplyOrientation] = o.applyOrientation === false ? 0 : 1;
  w[Field.WindowOff] = o.decodeWindow === false ? 1 : 0;
  if (o.randomCrop) {
    if (o.crop) throw new DecodeError('bad-request', 'randomCrop and crop cannot be combined');
    writeRandomCrop(w, o.randomCrop);
  }
}

function readMessage(memory: WebAssembly.Memory, jobPtr: number): string {
  const bytes = new Uint8Array(memory.buffer, jobPtr + JOB_WORDS * 4, JOB_MESSAGE_BYTES);
  const end = bytes.indexOf(0);
  // TextDecoder refuses views of shared memory, so copy the few bytes first.
  return new TextDecoder().decode(bytes.slice(0, end < 0 ? bytes.length : end));
}
