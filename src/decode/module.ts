import { WorkerError } from '../errors/index.ts';
import { crossOriginPthreadWorker, nodePthreadStarter, runtimeName } from '../runtime/index.ts';
import { JOB_WORDS } from './abi.ts';
import { DecodeError } from './errors.ts';
import { importUrl } from './import-url.js';
import type { TandemDecodeModule } from '../../wasm/dist/tandem-decode.mjs';
import type { TandemDecodeSingleModule } from '../../wasm/dist/tandem-decode-st.mjs';

/** The loaded emscripten module with the few operations the pool needs. */
export interface DecodeModule {
  exports: TandemDecodeModule;
  memory: WebAssembly.Memory;
  /** malloc that throws instead of returning 0. */
  malloc(bytes: number): number;
  /** Ends the module's worker threads; call only after every pool thread has exited. */
  close(): void;
  /** The module's worker threads that are alive (emscripten's own count). */
  liveWorkers(): number;
}

// Taken before any factory call, so that overlapping loads cannot save each other's replacement.
const runtimeWorker = Object.getOwnPropertyDescriptor(globalThis, 'Worker');

async function importAt<T>(url: URL): Promise<T> {
  try {
    return (await importUrl(url.href)) as T;
  } catch (error) {
    throw new DecodeError(
      'module-unavailable',
      `cannot load ${url.href} (moduleBase): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** `base`: the folder the modules are served from (DecodePoolOptions.moduleBase); default the package's. */
export async function loadDecodeModule(threads: number, warn: (message: string) => void, base?: URL): Promise<DecodeModule> {
  if (typeof SharedArrayBuffer === 'undefined' || (typeof crossOriginIsolated !== 'undefined' && !crossOriginIsolated)) {
    // Without isolation emscripten's factory never resolves (it fails inside a worker), so say why now.
    throw new DecodeError(
      'no-shared-memory',
      'tandem decode: SharedArrayBuffer is unavailable. Serve the page cross-origin isolated ' +
        '(Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp).',
    );
  }
  const { default: createTandemDecode } = base
    ? await importAt<typeof import('../../wasm/dist/tandem-decode.mjs')>(new URL('tandem-decode.mjs', base))
    : await import('../../wasm/dist/tandem-decode.mjs');
  // Emscripten's Node workers are unref'd: without a live handle, Node would exit while the
  // factory waits for them to load.
  const keepAlive = setInterval(() => {}, 1 << 30);
  // Node: the pthread workers are started by Tandem (with flags a worker accepts), and one that
  // cannot start fails the load with a WorkerError instead of ending the process.
  let startFailed: ((error: WorkerError) => void) | undefined;
  const failure = new Promise<never>((_, reject) => (startFailed = reject));
  // Raced below while the module loads; a thread that fails later must not be an unhandled rejection.
  failure.catch(() => {});
  const node = runtimeName === 'node' ? await nodePthreadStarter((error) => startFailed?.(error)) : undefined;
  // Under Node (and Deno, which emscripten takes for Node) the factory replaces the global
  // `Worker` with worker_threads' Worker. It starts all its pthread workers before resolving, so
  // the runtime's own Worker is put back afterwards for everyone else (the pipeline's workers).
  const created = createTandemDecode({
    tandemThreads: threads,
    // A page importing Tandem from another origin (a CDN) cannot start workers from there directly.
    ...(runtimeName === 'browser' ? { tandemWorker: crossOriginPthreadWorker } : {}),
    // Emscripten's Node path drives worker_threads' Worker (`on`, `unref`), the type its .d.mts names for the web.
    ...(node ? { tandemWorker: node.start as unknown as (moduleUrl: string) => Worker } : {}),
    printErr: warn,
  });
  const exports = await Promise.race([created, failure])
    .finally(() => {
      clearInterval(keepAlive);
      // Browsers run emscripten's web path, which leaves Worker alone (and the page may have its own).
      if (runtimeName === 'browser') return;
      if (runtimeWorker) Object.defineProperty(globalThis, 'Worker', runtimeWorker);
      else delete (globalThis as { Worker?: unknown }).Worker;
    })
    .catch(async (error: unknown) => {
      // The module never resolves once a thread failed to start: end the threads that did.
      await Promise.all((node?.started ?? []).map((w) => w.terminate()));
      throw error;
    });
  const words = exports._td_job_words();
  if (words !== JOB_WORDS)
    throw new DecodeError('module-unavailable', `tandem decode: job layout mismatch (wasm ${words} words, JS ${JOB_WORDS})`);
  const memory = exports.wasmMemory;
  return {
    exports,
    memory,
    malloc(bytes: number): number {
      const ptr = exports._malloc(bytes);
      if (ptr === 0) throw new RangeError(`tandem decode: cannot allocate ${bytes} bytes of wasm memory`);
      return ptr;
    },
    close(): void {
      exports.terminateThreads();
    },
    liveWorkers(): number {
      return exports.liveWorkers();
    },
  };
}

/** The single-threaded build: holds the fallback pool's records and targets on the caller's thread. */
export interface SingleModule {
  exports: TandemDecodeSingleModule;
  memory: WebAssembly.Memory;
  malloc(bytes: number): number;
}

export async function loadSingleModule(warn: (message: string) => void, base?: URL): Promise<SingleModule> {
  const { default: createTandemDecodeSingle } = base
    ? await importAt<typeof import('../../wasm/dist/tandem-decode-st.mjs')>(new URL('tandem-decode-st.mjs', base))
    : await import('../../wasm/dist/tandem-decode-st.mjs');
  const exports = await createTandemDecodeSingle({ printErr: warn });
  const words = exports._td_job_words();
  if (words !== JOB_WORDS)
    throw new DecodeError('module-unavailable', `tandem decode: job layout mismatch (wasm ${words} words, JS ${JOB_WORDS})`);
  return {
    exports,
    // Read on every use: a module without shared memory replaces its buffer when it grows.
    get memory() {
      return exports.wasmMemory;
    },
    malloc(bytes: number): number {
      const ptr = exports._malloc(bytes);
      if (ptr === 0) throw new RangeError(`tandem decode: cannot allocate ${bytes} bytes of wasm memory`);
      return ptr;
    },
  };
}
