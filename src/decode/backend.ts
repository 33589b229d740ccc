// What a decode pool runs on. Two backends share the job record of abi.ts: pthreads in one shared
// memory (threads.ts), or, where SharedArrayBuffer is unavailable, single-threaded instances in
// workers (workers.ts). The pool above them fills requests and reads results the same way.

/** 'pthreads': one module, threads sharing its memory. 'workers': one instance per worker. */
export type DecodeMode = 'pthreads' | 'workers';

/** One reusable job record in the pool's memory, plus what its backend keeps with it. */
export interface JobSlot {
  ptr: number;
  words: Int32Array;
  /** pthreads backend: the padded input buffer in wasm memory. */
  input: number;
  inputCapacity: number;
  /** Side array for video jobs (frame selection, then timestamps out). */
  aux: number;
  auxWords: number;
}

export interface DecodeBackend {
  readonly mode: DecodeMode;
  readonly threads: number;
  /** The memory the pool's records and the caller's targets live in. */
  readonly memory: WebAssembly.Memory;
  /** malloc that throws instead of returning 0. */
  malloc(bytes: number): number;
  free(ptr: number): void;
  /**
   * Runs the request in `slot` (filled, except its input) on `bytes`; resolves once the record
   * holds the result and the output is in place. Never rejects for a bad item: the record says.
   */
  execute(slot: JobSlot, bytes: Uint8Array): Promise<void>;
  /**
   * A job ran past its time limit: stop it if this backend can (a worker can be terminated and
   * replaced, completing the job as 'over-budget'). Returns false when the job keeps its thread
   * (a wasm pthread cannot be killed); it completes whenever that thread comes back.
   */
  abandon(slot: JobSlot): boolean;
  /**
   * Completes queued jobs as cancelled, waits for running ones, then ends every thread. `stuck`
   * threads (held by jobs past their time limit) are not waited for: they are terminated.
   */
  close(stuck?: number): Promise<void>;
  /** Worker threads this backend holds right now (0 once closed). */
  liveWorkers(): number;
  /** Bytes of `memory` its allocator has handed out and not had back (malloc's own count). */
  heapBytes(): number;
}

/** True where wasm threads can share memory (Node, Deno, cross-origin isolated pages). */
export function canShareMemory(): boolean {
  if (typeof SharedArrayBuffer === 'undefined') return false;
  return typeof crossOriginIsolated === 'undefined' || crossOriginIsolated;
}
