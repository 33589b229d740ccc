import { DecodeError } from './errors.ts';
import { Field, INPUT_PADDING, JOB_WORDS, JobKind, JobState } from './abi.ts';
import type { DecodeBackend, JobSlot } from './backend.ts';
import { loadDecodeModule, type DecodeModule } from './module.ts';

/**
 * Pool threads inside one wasm module, all sharing its memory. The event loop copies the input
 * into wasm memory, enqueues the job in C and awaits its state word with Atomics.waitAsync; the
 * decoder writes straight into the caller's target in the same memory.
 */
export class PthreadBackend implements DecodeBackend {
  readonly mode = 'pthreads';
  #module: DecodeModule;

  private constructor(
    module: DecodeModule,
    readonly threads: number,
  ) {
    this.#module = module;
  }

  static async create(threads: number, warn: (message: string) => void, base?: URL): Promise<PthreadBackend> {
    const module = await loadDecodeModule(threads, warn, base);
    const started = module.exports._td_pool_start(threads);
    if (started !== threads) {
      module.close();
      throw new DecodeError('no-threads', `decode pool: started ${started} of ${threads} threads`);
    }
    return new PthreadBackend(module, threads);
  }

  get memory(): WebAssembly.Memory {
    return this.#module.memory;
  }

  malloc(bytes: number): number {
    return this.#module.malloc(bytes);
  }

  free(ptr: number): void {
    this.#module.exports._free(ptr);
  }

  heapBytes(): number {
    return this.#module.exports._td_heap_in_use();
  }

  async execute(slot: JobSlot, bytes: Uint8Array): Promise<void> {
    // A streamed job's `src` already points at its stream record; its bytes come later, on request.
    const kind = slot.words[Field.Kind];
    if (kind !== JobKind.VideoStream && kind !== JobKind.VideoDemuxStream) this.#copyInput(slot, bytes);
    this.#module.exports._td_submit(slot.ptr);
    // The job cannot be withdrawn once a thread may hold it: the caller's slot is reused only
    // after the thread has finished with it.
    await waitForDone(slot.words);
  }

  liveWorkers(): number {
    return this.#module.liveWorkers();
  }

  abandon(): boolean {
    return false;
  }

  #releaseInput(slot: JobSlot): void {
    if (slot.input) this.free(slot.input);
    slot.input = slot.inputCapacity = 0;
  }

  async close(stuck = 0): Promise<void> {
    const exports = this.#module.exports;
    exports._td_pool_stop();
    // Threads exit between jobs, and each exit notifies the count of live threads; a stuck one
    // never will, and terminating its worker is the only way to end it (module.close terminates
    // every pthread worker). The timer only keeps Node and Deno alive while the wait is pending:
    // a pending Atomics.waitAsync does not.
    const address = exports._td_pool_alive_address();
    for (;;) {
      const alive = new Int32Array(this.#module.memory.buffer, address, 1);
      const count = Atomics.load(alive, 0);
      if (count <= stuck) break;
      const waited = Atomics.waitAsync(alive, 0, count);
      if (!waited.async) continue;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([waited.value, new Promise((resolve) => (timer = setTimeout(resolve, 100)))]);
      clearTimeout(timer);
    }
    this.#module.close();
  }

  /** Copies the input into the slot's padded buffer and points the record at it. */
  #copyInput(slot: JobSlot, bytes: Uint8Array): void {
    const needed = bytes.length + INPUT_PADDING;
    if (slot.inputCapacity < needed) {
      const capacity = Math.max(needed, 256 * 1024, slot.inputCapacity * 2);
      this.#releaseInput(slot);
      slot.input = this.malloc(capacity);
      slot.inputCapacity = capacity;
      slot.words = new Int32Array(this.memory.buffer, slot.ptr, JOB_WORDS);
    }
    const heap = new Uint8Array(this.memory.buffer);
    heap.set(bytes, slot.input);
    heap.fill(0, slot.input + bytes.length, slot.input + needed);
    slot.words[Field.Src] = slot.input;
    slot.words[Field.SrcLen] = bytes.length;
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
