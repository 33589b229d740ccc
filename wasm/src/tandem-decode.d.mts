// Types of the emscripten factory built by wasm/build.sh (copied next to tandem-decode.mjs).
export interface TandemDecodeModule {
  wasmMemory: WebAssembly.Memory;
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  /** Bytes malloc has handed out and not had back. */
  _td_heap_in_use(): number;
  _td_job_words(): number;
  _td_job_size(): number;
  /** Tandem's SIMD128 motion compensation against ffmpeg's C: 0 when equal, else the first differing case. */
  _td_simd_check(seed: number, rounds: number): number;
  _td_pool_start(threads: number): number;
  _td_pool_stop(): void;
  _td_pool_alive(): number;
  _td_pool_alive_address(): number;
  _td_submit(job: number): void;
  _td_decode_now(job: number): number;
  /** Added by wasm/src/post.js: terminates every pthread worker. */
  terminateThreads(): void;
  /** Added by wasm/src/post.js: the pthread workers emscripten holds, running or parked. */
  liveWorkers(): number;
}
export interface TandemDecodeOptions {
  tandemThreads: number;
  print?: (line: string) => void;
  printErr?: (line: string) => void;
  locateFile?: (path: string, prefix: string) => string;
  /**
   * Called (wasm/bundler-safe.mjs adds the call) with this module's own URL whenever a pthread
   * worker is needed; a Worker it returns is used, null lets emscripten start its own.
   */
  tandemWorker?: (moduleUrl: string) => Worker | null;
}
export default function createTandemDecode(options: TandemDecodeOptions): Promise<TandemDecodeModule>;
