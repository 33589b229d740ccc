import {
  FORMAT_NAMES, INPUT_PADDING, JOB_BYTES, JOB_MESSAGE_BYTES,
  JOB_WORDS, STATUS_CODES, Field, JobKind, JobState,
} from './abi.ts';
import { DecodeError } from './errors.ts';
import {
  fillAudio, fillVideo, frameCount, readAudio, readVideo,
  type AudioDecodeOptions, type DecodedAudioInfo, type DecodedVideoInfo, type VideoDecodeOptions,
} from './media.ts';
import { loadDecodeModule, type DecodeModule } from './module.ts';
import { writeResize, type ImageDecodeOptions } from './options.ts';

export type { ImageDecodeOptions, ResizeOptions } from './options.ts';

export interface DecodedImageInfo {
  format: (typeof FORMAT_NAMES)[number];
  sourceWidth: number;
  sourceHeight: number;
  /** 1, 2, 4 or 8: the DCT-domain reduction the decoder used. */
  reducedScale: number;
  orientation: number;
  /** True when a pool pthread, not the caller's thread, did the work. */
  onPoolThread: boolean;
}

export interface DecodePoolStats {
  mode: 'pthreads';
  threads: number;
  inFlight: number;
  queued: number;
  completed: number;
  failed: number;
}

export interface DecodePoolOptions {
  /** Pool threads (default 2). Each decodes one image at a time. */
  threads?: number;
  /** Jobs handed to C at once; more requests wait in JS (default 4 × threads). */
  maxInFlight?: number;
}


/** One reusable job record plus its padded input buffer in wasm memory. */
interface JobSlot {
  ptr: number;
  words: Int32Array;
  input: number;
  inputCapacity: number;
  aux: number;
  auxWords: number;
}

/**
 * Decodes images on a pool of wasm pthreads. The event loop only copies input bytes into wasm
 * memory, enqueues a job and awaits its completion word (Atomics.waitAsync); decoding, resizing
 * and colour conversion run on the pool threads and write straight into the caller's target
 * (normally one slot of a batch buffer in the same shared memory).
 */
export class DecodePool {
  readonly threads: number;
  #module: DecodeModule;
  #free: JobSlot[] = [];
  #waiters: Array<(slot: JobSlot) => void> = [];
  #inFlight = 0;
  #completed = 0;
  #failed = 0;
  #closed = false;
  #keepAlive: ReturnType<typeof setInterval> | undefined;

  private constructor(module: DecodeModule, threads: number, maxInFlight: number) {
    this.#module = module;
    this.threads = threads;
    for (let i = 0; i < maxInFlight; i++) {
      const ptr = module.malloc(JOB_BYTES);
      this.#free.push({ ptr, words: new Int32Array(module.memory.buffer, ptr, JOB_WORDS), input: 0, inputCapacity: 0, aux: 0, auxWords: 0 });
    }
  }

  static async create(options: DecodePoolOptions = {}): Promise<DecodePool> {
    const threads = Math.max(1, Math.floor(options.threads ?? 2));
    const module = await loadDecodeModule(threads);
    const started = module.exports._td_pool_start(threads);
    if (started !== threads) {
      module.close();
      throw new Error(`decode pool: started ${started} of ${threads} threads`);
    }
    return new DecodePool(module, threads, Math.max(threads, options.maxInFlight ?? threads * 4));
  }

  /** The shared memory every buffer of this pool lives in. */
  get memory(): WebAssembly.Memory {
    return this.#module.memory;
  }

  /** Allocates `bytes` in wasm memory (e.g. a batch buffer); the caller frees it with `free`. */
  allocate(bytes: number): number {
    return this.#module.malloc(bytes);
  }

  free(ptr: number): void {
    this.#module.exports._free(ptr);
  }

  /**
   * Decodes `bytes` into `targetPtr` (height × width × channels bytes in this pool's memory).
   * Resolves with what the decoder saw, or rejects with a DecodeError for this item only.
   */
  async decodeInto(bytes: Uint8Array, targetPtr: number, options: ImageDecodeOptions, signal?: AbortSignal): Promise<DecodedImageInfo> {
    return this.#run(bytes, signal, (w) => fillImage(w, targetPtr, options), (slot) => this.#result(slot));
  }

  /**
   * Decodes the audio of a whole in-memory file (MP3, AAC/M4A, WAV, FLAC, Ogg Opus/Vorbis, or the
   * audio of an MP4/WebM) into `targetPtr`: `maxFrames` × `channels` f32 samples, interleaved,
   * resampled to `sampleRate` and mixed to `channels`. Samples past the end are zero.
   */
  async decodeAudio(bytes: Uint8Array, targetPtr: number, options: AudioDecodeOptions, signal?: AbortSignal): Promise<DecodedAudioInfo> {
    return this.#run(bytes, signal, (w) => fillAudio(w, targetPtr, options), (slot) => this.#media(slot, readAudio));
  }

  /**
   * Decodes the frames chosen by `options.frames` of a whole in-memory video (MP4/MOV, WebM, MKV;
   * H.264, VP8, VP9) into consecutive height × width × channels u8 slots starting at `targetPtr`
   * (an NHWC clip of `frameCount(options.frames)` frames). Slots without a frame are zero.
   */
  async decodeVideo(bytes: Uint8Array, targetPtr: number, options: VideoDecodeOptions, signal?: AbortSignal): Promise<DecodedVideoInfo> {
    const count = frameCount(options.frames);
    return this.#run(
      bytes,
      signal,
      (w, slot) => {
        const aux = this.#aux(slot, 2 * count);
        fillVideo(w, targetPtr, options, aux, new Int32Array(this.#module.memory.buffer, aux, 2 * count));
      },
      (slot) => this.#media(slot, (w) => readVideo(w, new Int32Array(this.#module.memory.buffer, slot.aux, 2 * count).subarray(count))),
    );
  }

  async #run<T>(bytes: Uint8Array, signal: AbortSignal | undefined, fill: (words: Int32Array, slot: JobSlot) => void, read: (slot: JobSlot) => T): Promise<T> {
    if (this.#closed) throw new DecodeError('closed', 'the decode pool is closed');
    signal?.throwIfAborted();
    // Atomics.waitAsync and emscripten's unref'd workers do not keep Node or Deno alive, so an
    // idle interval holds the event loop open exactly while decodes are pending.
    if (this.#inFlight++ === 0 && !this.#keepAlive) this.#keepAlive = setInterval(() => {}, 1 << 30);
    const slot = this.#free.pop() ?? (await new Promise<JobSlot>((resolve) => this.#waiters.push(resolve)));
    try {
      if (this.#closed) throw new DecodeError('closed', 'the decode pool is closed');
      this.#copyInput(slot, bytes);
      fill(slot.words, slot);
      this.#module.exports._td_submit(slot.ptr);
      // The job cannot be withdrawn once a thread may hold it; an abort only stops the wait on
      // the result, and the slot is reused after the thread finishes with it.
      await waitForDone(slot.words);
      signal?.throwIfAborted();
      return read(slot);
    } finally {
      if (--this.#inFlight === 0) {
        clearInterval(this.#keepAlive);
        this.#keepAlive = undefined;
      }
      const next = this.#waiters.shift();
      if (next) next(slot);
      else this.#free.push(slot);
    }
  }

  stats(): DecodePoolStats {
    return { mode: 'pthreads', threads: this.threads, inFlight: this.#inFlight, queued: this.#waiters.length, completed: this.#completed, failed: this.#failed };
  }

  /** Stops the threads after the jobs in hand and releases the module; nothing keeps running. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#module.exports._td_pool_stop();
    while (this.#inFlight > 0 || this.#module.exports._td_pool_alive() > 0) await sleep(1);
    this.#module.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Copies the input into the slot's padded buffer and clears the job record. */
  #copyInput(slot: JobSlot, bytes: Uint8Array): void {
    const m = this.#module;
    const needed = bytes.length + INPUT_PADDING;
    if (slot.inputCapacity < needed) {
      const capacity = Math.max(needed, 256 * 1024, slot.inputCapacity * 2);
      if (slot.input) m.exports._free(slot.input);
      slot.input = 0;
      slot.inputCapacity = 0;
      slot.input = m.malloc(capacity);
      slot.inputCapacity = capacity;
    }
    const heap = new Uint8Array(m.memory.buffer);
    heap.set(bytes, slot.input);
    heap.fill(0, slot.input + bytes.length, slot.input + needed);
    slot.words = new Int32Array(m.memory.buffer, slot.ptr, JOB_WORDS); // memory may have grown
    slot.words.fill(0);
    slot.words[Field.Src] = slot.input;
    slot.words[Field.SrcLen] = bytes.length;
  }

  /** The slot's side array of `words` i32 (video frame selection and timestamps). */
  #aux(slot: JobSlot, words: number): number {
    if (slot.auxWords < words) {
      if (slot.aux) this.#module.exports._free(slot.aux);
      slot.aux = 0;
      slot.auxWords = 0;
      slot.aux = this.#module.malloc(words * 4);
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
      throw new DecodeError(code === 'ok' ? 'corrupt' : code, readMessage(this.#module.memory, slot.ptr));
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
      reducedScale: 1 << (w[Field.ReducedLog2] ?? 0),
      orientation: w[Field.Orientation] ?? 1,
      onPoolThread: w[Field.OnPoolThread] === 1,
    };
  }
}

async function waitForDone(words: Int32Array): Promise<void> {
  for (;;) {
    const state = Atomics.load(words, Field.State);
    if (state === JobState.Done) return;
    const waited = Atomics.waitAsync(words, Field.State, state);
    if (waited.async) await waited.value;
  }
}

function fillImage(w: Int32Array, targetPtr: number, o: ImageDecodeOptions): void {
  w[Field.Kind] = JobKind.Image;
  writeResize(w, targetPtr, o);
  w[Field.AllowReduced] = o.reducedScale === false ? 0 : 1;
  w[Field.ApplyOrientation] = o.applyOrientation === false ? 0 : 1;
}

function readMessage(memory: WebAssembly.Memory, jobPtr: number): string {
  const bytes = new Uint8Array(memory.buffer, jobPtr + JOB_WORDS * 4, JOB_MESSAGE_BYTES);
  const end = bytes.indexOf(0);
  // TextDecoder refuses views of shared memory, so copy the few bytes first.
  return new TextDecoder().decode(bytes.slice(0, end < 0 ? bytes.length : end));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
