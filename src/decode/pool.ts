import {
  FILTER_CODES, FIT_CODES, FORMAT_NAMES, INPUT_PADDING, JOB_BYTES, JOB_MESSAGE_BYTES,
  JOB_WORDS, STATUS_CODES, Field, JobState,
} from './abi.ts';
import { DecodeError } from './errors.ts';
import { loadDecodeModule, type DecodeModule } from './module.ts';

export interface ImageDecodeOptions {
  width: number;
  height: number;
  /** 1 gray, 3 RGB (default), 4 RGBA; output is u8 HWC. */
  channels?: 1 | 3 | 4;
  /** 'cover' (default): shorter side to size, then centre crop (torchvision Resize + CenterCrop). */
  fit?: keyof typeof FIT_CODES;
  filter?: keyof typeof FILTER_CODES;
  /** Crop box in oriented source pixels, applied before fitting. */
  crop?: { x: number; y: number; width: number; height: number };
  /** Limit on width × height, as declared by the header and as decoded (default 64 Mpx). */
  maxPixels?: number;
  /** Let JPEG decode at 1/2, 1/4 or 1/8 scale in the DCT domain when still ≥ the target (default true). */
  reducedScale?: boolean;
  applyOrientation?: boolean;
  padValue?: number;
}

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

const DEFAULT_MAX_PIXELS = 64 * 1024 * 1024;

/** One reusable job record plus its padded input buffer in wasm memory. */
interface JobSlot {
  ptr: number;
  words: Int32Array;
  input: number;
  inputCapacity: number;
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
      this.#free.push({ ptr, words: new Int32Array(module.memory.buffer, ptr, JOB_WORDS), input: 0, inputCapacity: 0 });
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
    if (this.#closed) throw new DecodeError('closed', 'the decode pool is closed');
    signal?.throwIfAborted();
    // Atomics.waitAsync and emscripten's unref'd workers do not keep Node or Deno alive, so an
    // idle interval holds the event loop open exactly while decodes are pending.
    if (this.#inFlight++ === 0 && !this.#keepAlive) this.#keepAlive = setInterval(() => {}, 1 << 30);
    const slot = this.#free.pop() ?? (await new Promise<JobSlot>((resolve) => this.#waiters.push(resolve)));
    try {
      if (this.#closed) throw new DecodeError('closed', 'the decode pool is closed');
      this.#fill(slot, bytes, targetPtr, options);
      this.#module.exports._td_submit(slot.ptr);
      // The job cannot be withdrawn once a thread may hold it; an abort only stops the wait on
      // the result, and the slot is reused after the thread finishes with it.
      await waitForDone(slot.words);
      signal?.throwIfAborted();
      return this.#result(slot);
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

  #fill(slot: JobSlot, bytes: Uint8Array, targetPtr: number, o: ImageDecodeOptions): void {
    const m = this.#module;
    const needed = bytes.length + INPUT_PADDING;
    if (slot.inputCapacity < needed) {
      if (slot.input) m.exports._free(slot.input);
      slot.inputCapacity = Math.max(needed, 256 * 1024, slot.inputCapacity * 2);
      slot.input = m.malloc(slot.inputCapacity);
    }
    const heap = new Uint8Array(m.memory.buffer);
    heap.set(bytes, slot.input);
    heap.fill(0, slot.input + bytes.length, slot.input + needed);
    const w = slot.words;
    w.fill(0);
    w[Field.Src] = slot.input;
    w[Field.SrcLen] = bytes.length;
    w[Field.Dst] = targetPtr;
    w[Field.DstW] = o.width;
    w[Field.DstH] = o.height;
    w[Field.Channels] = o.channels ?? 3;
    w[Field.Fit] = FIT_CODES[o.fit ?? 'cover'];
    w[Field.Filter] = FILTER_CODES[o.filter ?? 'bilinear'];
    w[Field.MaxPixels] = Math.min(o.maxPixels ?? DEFAULT_MAX_PIXELS, 0x7fffffff);
    w[Field.AllowReduced] = o.reducedScale === false ? 0 : 1;
    w[Field.ApplyOrientation] = o.applyOrientation === false ? 0 : 1;
    if (o.crop) {
      w[Field.CropX] = o.crop.x;
      w[Field.CropY] = o.crop.y;
      w[Field.CropW] = o.crop.width;
      w[Field.CropH] = o.crop.height;
    }
    w[Field.PadValue] = o.padValue ?? 0;
  }

  #result(slot: JobSlot): DecodedImageInfo {
    const w = slot.words;
    const status = w[Field.Status] ?? 0;
    if (status !== 0) {
      this.#failed++;
      const code = STATUS_CODES[status] ?? 'corrupt';
      throw new DecodeError(code === 'ok' ? 'corrupt' : code, readMessage(this.#module.memory, slot.ptr));
    }
    this.#completed++;
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

function readMessage(memory: WebAssembly.Memory, jobPtr: number): string {
  const bytes = new Uint8Array(memory.buffer, jobPtr + JOB_WORDS * 4, JOB_MESSAGE_BYTES);
  const end = bytes.indexOf(0);
  // TextDecoder refuses views of shared memory, so copy the few bytes first.
  return new TextDecoder().decode(bytes.slice(0, end < 0 ? bytes.length : end));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
