/**
 * Starting a module worker is the one thing that differs between runtimes: Deno and browsers have
 * `new Worker(url, { type: 'module' })`; Node 20 has `worker_threads`, where a short CommonJS
 * shim gives the module the web worker globals (`onmessage`, `postMessage`) it expects.
 */
import type { Worker as NodeWorker } from 'node:worker_threads';
import { WorkerError } from '../errors/index.ts';
import { runtimeName } from './detect.ts';

export interface WorkerPort {
  postMessage(message: unknown, transfer: Transferable[]): void;
  onMessage(handler: (data: unknown) => void): void;
  /** Uncaught errors and unexpected exits; not called after terminate(). */
  onError(handler: (error: Error) => void): void;
  terminate(): Promise<void>;
}

/**
 * Starts the module at `url` as a worker. `startWeb`, for Deno and browsers, is the caller's own
 * `new Worker(new URL('./x.js', import.meta.url), { type: 'module' })`: written in that form in the
 * caller's source, bundlers (Vite, webpack) see the worker and bundle it with what it imports. When
 * it throws (a script on another origin), the worker starts from `url` as without it.
 */
export async function startModuleWorker(url: URL, startWeb?: () => Worker): Promise<WorkerPort> {
  if (runtimeName === 'node') return startNodeWorker(url);
  let worker: Worker | undefined;
  try {
    worker = startWeb?.();
  } catch {
    worker = undefined;
  }
  return portOf(worker ?? new Worker(workerScriptUrl(url), { type: 'module' }));
}

const sameOriginScripts = new Map<string, string>();

/**
 * A URL a page may start a module worker from. Browsers refuse `new Worker(url)` for a script on
 * another origin (a CDN, a mirror), whatever its CORS headers, but a same-origin `blob:` module
 * may import it (CORS applies to that import). So another origin's script is wrapped in a one-line
 * blob module, made once per script and kept for the page's life: the worker runs the real module,
 * whose `import.meta.url` (and every URL it resolves from it, such as the .wasm) stays the real one.
 * Same-origin URLs, and every URL outside browsers, come back as they are.
 */
export function workerScriptUrl(url: URL): URL | string {
  const here = (globalThis as { location?: { origin?: string } }).location?.origin;
  if (runtimeName !== 'browser' || !here || url.origin === here || !/^https?:$/.test(url.protocol)) return url;
  let script = sameOriginScripts.get(url.href);
  if (!script) {
    script = URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};\n`], { type: 'text/javascript' }));
    sameOriginScripts.set(url.href, script);
  }
  return script;
}

/**
 * For emscripten's pthread workers (wasm/bundler-safe.mjs adds the hook): a worker for the
 * threaded module at `moduleUrl` when that is on another origin; null otherwise, so emscripten
 * starts its own (the form bundlers recognise).
 */
export function crossOriginPthreadWorker(moduleUrl: string): Worker | null {
  const script = workerScriptUrl(new URL(moduleUrl));
  return typeof script === 'string' ? new Worker(script, { type: 'module', name: 'em-pthread' }) : null;
}

/**
 * Holds what arrives before the caller attaches its handler: the pool attaches after an await,
 * and Deno dispatches worker messages from a promise continuation, so a fast worker's first
 * message could otherwise reach no listener and be lost (the pool then waits for ever).
 */
function inbox<T>(): { deliver(value: T): void; attach(handler: (value: T) => void): void } {
  let handler: ((value: T) => void) | undefined;
  const early: T[] = [];
  return {
    deliver: (value) => (handler ? handler(value) : early.push(value)),
    attach: (h) => {
      handler = h;
      for (const value of early.splice(0)) h(value);
    },
  };
}

function portOf(w: Worker): WorkerPort {
  let terminated = false;
  const messages = inbox<unknown>();
  const errors = inbox<Error>();
  w.addEventListener('message', (e) => messages.deliver(e.data));
  w.addEventListener('error', (e) => {
    // Without preventDefault, Deno rethrows a worker's error in the parent and exits.
    e.preventDefault();
    if (!terminated) errors.deliver(new WorkerError('worker-crashed', e.message || 'worker error', { cause: e.error }));
  });
  w.addEventListener('messageerror', () => {
    if (!terminated) errors.deliver(new WorkerError('bad-message', 'worker message could not be deserialized'));
  });
  return {
    postMessage: (m, t) => w.postMessage(m, t),
    onMessage: (h) => messages.attach(h),
    onError: (h) => errors.attach(h),
    terminate: () => {
      terminated = true;
      w.terminate();
      return Promise.resolve();
    },
  };
}

const nodeShim = (href: string): string => `
const { parentPort } = require('node:worker_threads');
globalThis.postMessage = (m, t) => parentPort.postMessage(m, Array.isArray(t) ? t : t && t.transfer);
parentPort.on('message', (data) => { if (typeof globalThis.onmessage === 'function') globalThis.onmessage({ data }); });
import(${JSON.stringify(href)});
`;

async function startNodeWorker(url: URL): Promise<WorkerPort> {
  // A computed specifier keeps bundlers from pulling node:worker_threads into browser builds.
  const spec = 'node:worker_threads';
  const wt = (await import(/* @vite-ignore */ /* webpackIgnore: true */ spec)) as { Worker: typeof NodeWorker };
  const w = new wt.Worker(nodeShim(url.href), { eval: true, ...nodeWorkerFlags(wt) });
  let terminated = false;
  const messages = inbox<unknown>();
  const errors = inbox<Error>();
  w.on('message', (data: unknown) => messages.deliver(data));
  w.on('error', (e: Error) => {
    // What the worker threw reaches Node as it was thrown; callers branch on WorkerError's codes.
    if (!terminated) errors.deliver(new WorkerError('worker-crashed', e.message || String(e), { cause: e }));
  });
  w.on('exit', (code: number) => {
    if (!terminated) errors.deliver(new WorkerError('worker-exited', `worker exited with code ${code}`));
  });
  return {
    // Node's TransferListItem and the DOM's Transferable describe the same objects.
    postMessage: (m, t) => w.postMessage(m, t as unknown as Parameters<NodeWorker['postMessage']>[1]),
    onMessage: (h) => messages.attach(h),
    onError: (h) => errors.attach(h),
    terminate: async () => {
      terminated = true;
      await w.terminate();
    },
  };
}

type NodeWorkerThreads = { Worker: typeof NodeWorker };

/**
 * Flags that name the main program's own input (`node --input-type=module -e …`, a REPL, a test
 * run): a worker inherits them and then fails to load its file, or treats the CommonJS shim as an
 * ES module. They, and a value given as the next argument, are never passed on.
 */
const MAIN_ONLY =
  /^(?:--input-type|--eval|--print|--check|--interactive|--test|--watch|--watch-path|--experimental-default-type|-[epci])(?:=|$)/;
const TAKES_VALUE = new Set(['--input-type', '--eval', '--print', '-e', '-p', '--watch-path', '--experimental-default-type']);
/** Flags a worker accepts when given explicitly: what loads modules (loaders, conditions) and what only reports. */
const WORKER_SAFE =
  /^(?:--import|--require|-r|--loader|--experimental-loader|--conditions|-C|--experimental-[\w-]+|--no-experimental-[\w-]+|--no-warnings|--no-deprecation|--enable-source-maps|--trace-[\w-]+|--preserve-symlinks(?:-main)?)(?:=|$)/;
const SAFE_WITH_VALUE = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader', '--conditions', '-C']);

/** `flags` without the main-only ones (and their values); the others kept in order. */
function keep(flags: readonly string[], allowed: (flag: string) => boolean, withValue: (flag: string) => boolean): string[] {
  const kept: string[] = [];
  for (let i = 0; i < flags.length; i++) {
    const flag = flags[i] ?? '';
    const separateValue = !flag.includes('=') && withValue(flag) && i + 1 < flags.length;
    if (allowed(flag)) kept.push(flag, ...(separateValue ? [flags[i + 1] ?? ''] : []));
    if (separateValue) i++;
  }
  return kept;
}

/**
 * The `execArgv` option for a Node worker: nothing (inherit, Node's default) unless the process
 * was started with a main-only flag; then the rest of its flags, and if Node refuses one of those
 * given explicitly (per-process V8 options, ERR_WORKER_INVALID_EXEC_ARGV), only the module-loading
 * and reporting ones. Checked once per process.
 */
let flagsForWorkers: { execArgv?: string[] } | undefined;
function nodeWorkerFlags(wt: NodeWorkerThreads): { execArgv?: string[] } {
  if (flagsForWorkers) return flagsForWorkers;
  const inherited = (globalThis as { process?: { execArgv?: string[] } }).process?.execArgv ?? [];
  if (!inherited.some((flag) => MAIN_ONLY.test(flag))) return (flagsForWorkers = {});
  const withoutMain = keep(
    inherited,
    (flag) => !MAIN_ONLY.test(flag),
    (flag) => TAKES_VALUE.has(flag) || SAFE_WITH_VALUE.has(flag),
  );
  try {
    // Node checks the flags before it starts the thread; the worker itself runs nothing.
    void new wt.Worker('', { eval: true, execArgv: withoutMain }).terminate();
    flagsForWorkers = { execArgv: withoutMain };
  } catch {
    flagsForWorkers = {
      execArgv: keep(
        withoutMain,
        (flag) => WORKER_SAFE.test(flag),
        (flag) => SAFE_WITH_VALUE.has(flag),
      ),
    };
  }
  return flagsForWorkers;
}

/**
 * Node's emscripten pthread workers, started with the flags above (emscripten's own start would
 * inherit a main-only flag and fail). Emscripten's error listener rethrows, which would end the
 * caller's process: its listeners are wrapped, and a start failure goes to `failed` instead, where
 * the module's loader turns it into a typed error.
 */
export async function nodePthreadStarter(failed: (error: WorkerError) => void): Promise<{
  start: (moduleUrl: string) => NodeWorker;
  started: NodeWorker[];
}> {
  const spec = 'node:worker_threads';
  const wt = (await import(/* @vite-ignore */ /* webpackIgnore: true */ spec)) as NodeWorkerThreads;
  const started: NodeWorker[] = [];
  const start = (moduleUrl: string): NodeWorker => {
    const worker = new wt.Worker(new URL(moduleUrl), { workerData: 'em-pthread', name: 'em-pthread', ...nodeWorkerFlags(wt) });
    started.push(worker);
    const on = worker.on.bind(worker);
    worker.on = ((event: string, listener: (...args: unknown[]) => void) =>
      on(
        event,
        event !== 'error'
          ? listener
          : (...args: unknown[]) => {
              try {
                listener(...args);
              } catch {
                // Reported once, typed, through `failed` (below).
              }
            },
      )) as NodeWorker['on'];
    on('error', (e: Error) => failed(new WorkerError('worker-crashed', `a decode thread could not start: ${e.message}`, { cause: e })));
    return worker;
  };
  return { start, started };
}
