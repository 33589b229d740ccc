// Types of the single-threaded factory built by wasm/build.sh (variant "st"): one instance per
// worker in the fallback pool used where SharedArrayBuffer is unavailable.
export interface TandemDecodeSingleModule {
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
  _td_decode_now(job: number): number;
}
export interface TandemDecodeSingleOptions {
  print?: (line: string) => void;
  printErr?: (line: string) => void;
  locateFile?: (path: string, prefix: string) => string;
}
export default function createTandemDecodeSingle(options?: TandemDecodeSingleOptions): Promise<TandemDecodeSingleModule>;
