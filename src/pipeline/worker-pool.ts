/**
 * Worker-pool executor: each worker imports the user's module once and runs one task at a time.
 * Functions cannot cross a worker boundary, so a stage names a module URL and an export.
 * ArrayBuffers (and typed arrays' buffers) in arguments and results are transferred, not copied.
 */
import { asError, WorkerError } from '../errors/index.ts';
import { startModuleWorker, type WorkerPort } from '../runtime/index.ts';
import { WorkerTaskError } from './errors.ts';
import type { Executor } from './executor.ts';
import type { PipeConfig, WorkerTask } from './types.ts';

interface Job {
  readonly input: unknown;
  readonly signal: AbortSignal;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

interface Slot {
  port: WorkerPort | undefined;
  job: Job | undefined;
}

type Reply =
  | { type: 'loaded' }
  | { type: 'ready' }
  | { type: 'init-error'; error: SerializedError }
  | { type: 'result'; id: number; ok: true; result: unknown }
  | { type: 'result'; id: number; ok: false; error: SerializedError };

interface SerializedError {
  name: string;
  message: string;
  stack: string | undefined;
  /** A `code` the worker's error carried (every TandemError has one). */
  code?: string | undefined;
}

/** The built-in error classes, which are the same on both sides of the worker boundary. */
const BUILT_IN: Record<string, ErrorConstructor> = { Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError };

/**
 * The host's copy of an error thrown in a worker, with its name, message and stack: a built-in
 * class as itself; anything else as a `WorkerTaskError` (a TandemError) carrying the worker
 * error's `code`, or 'task-failed' when it had none, so callers branch on codes as they would on
 * the error itself. Other classes cannot cross; their names do.
 */
function reviveError(e: SerializedError): Error {
  const BuiltIn = e.code === undefined ? BUILT_IN[e.name] : undefined;
  const revived = BuiltIn ? new BuiltIn(e.message) : new WorkerTaskError(e.name, e.code ?? 'task-failed', e.message);
  if (e.stack !== undefined) revived.stack = e.stack;
  return revived;
}

/** Buffers reachable from `value` (mirrors `collect` in worker-bootstrap.js). */
export function transferables(value: unknown, out = new Set<ArrayBuffer>(), depth = 0): Set<ArrayBuffer> {
  if (typeof value !== 'object' || value === null || depth > 3) return out;
  if (value instanceof ArrayBuffer) out.add(value);
  else if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer) out.add(value.buffer);
  } else if (Array.isArray(value)) for (const v of value) transferables(v, out, depth + 1);
  else if (Object.getPrototypeOf(value) === Object.prototype) {
    for (const v of Object.values(value)) transferables(v, out, depth + 1);
  }
  return out;
}

export const defaultBootstrapUrl = (): URL => new URL('./worker-bootstrap.js', import.meta.url);

export class WorkerPoolExecutor implements Executor {
  readonly #task: WorkerTask;
  readonly #size: number;
  readonly #bootstrap: URL;
  readonly #slots: Slot[] = [];
  readonly #idle: Slot[] = [];
  readonly #queue: Job[] = [];
  readonly #signals = new Set<AbortSignal>();
  #starting = 0;
  #nextId = 0;
  #broken: Error | undefined;
  #closed = false;

  constructor(task: WorkerTask, size: number, bootstrap: URL = defaultBootstrapUrl()) {
    this.#task = task;
    this.#size = Math.max(1, task.workers ?? size);
    this.#bootstrap = bootstrap;
  }

  /** Number of live workers (started or starting). */
  get workers(): number {
    return this.#slots.length;
  }

  run(input: unknown, signal: AbortSignal): Promise<unknown> {
    if (this.#closed) return Promise.reject(new WorkerError('pool-closed', 'worker pool is closed'));
    if (this.#broken !== undefined) return Promise.reject(this.#broken);
    if (signal.aborted) return Promise.reject(signal.reason);
    this.#watch(signal);
    return new Promise((resolve, reject) => {
      this.#queue.push({ input, signal, resolve, reject });
      this.#dispatch();
    });
  }

  /** `await using`: close() at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const err = new DOMException('worker pool closed', 'AbortError');
    for (const job of this.#queue.splice(0)) job.reject(err);
    const ports: WorkerPort[] = [];
    for (const slot of this.#slots.splice(0)) {
      slot.job?.reject(err);
      slot.job = undefined;
      if (slot.port !== undefined) ports.push(slot.port);
    }
    this.#idle.length = 0;
    await Promise.allSettled(ports.map((p) => p.terminate()));
  }

  /** One listener per signal (not per job): on abort, every job under it rejects at once. */
  #watch(signal: AbortSignal): void {
    if (this.#signals.has(signal)) return;
    this.#signals.add(signal);
    signal.addEventListener(
      'abort',
      () => {
        for (let i = this.#queue.length - 1; i >= 0; i--) {
          const job = this.#queue[i]!;
          if (job.signal === signal) {
            this.#queue.splice(i, 1);
            job.reject(signal.reason);
          }
        }
        // Running jobs reject now; their slots stay busy until the worker answers or is terminated.
        for (const slot of this.#slots) if (slot.job?.signal === signal) slot.job.reject(signal.reason);
      },
      { once: true },
    );
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const slot = this.#idle.pop();
      if (slot === undefined) {
        if (this.#slots.length < this.#size && this.#starting < this.#queue.length) void this.#spawn();
        else return;
        continue;
      }
      const job = this.#queue.shift()!;
      slot.job = job;
      const msg = { type: 'run', id: this.#nextId++, args: job.input };
      const list = this.#task.transfer === false ? [] : [...transferables(job.input)];
      try {
        slot.port!.postMessage(msg, list);
      } catch {
        slot.port!.postMessage(msg, []);
      }
    }
  }

  async #spawn(): Promise<void> {
    const slot: Slot = { port: undefined, job: undefined };
    this.#slots.push(slot);
    this.#starting++;
    let port: WorkerPort;
    try {
      const entry = this.#task.entry;
      port = entry ? await startModuleWorker(entry.url, entry.start) : await startModuleWorker(this.#bootstrap);
    } catch (e) {
      this.#starting--;
      this.#breakPool(asError(e));
      return;
    }
    if (this.#closed || !this.#slots.includes(slot)) {
      this.#starting--;
      await port.terminate();
      return;
    }
    slot.port = port;
    port.onMessage((data) => this.#onMessage(slot, data as Reply));
    port.onError((e) => this.#onCrash(slot, e));
  }

  #onMessage(slot: Slot, m: Reply): void {
    if (this.#closed) return;
    const task = this.#task;
    if (m.type === 'loaded') {
      const init = { type: 'init', module: task.module, export: task.export, transfer: task.transfer, init: task.init };
      try {
        slot.port!.postMessage(init, []);
      } catch (e) {
        // A setup value that cannot be cloned (a function, a class instance with private state).
        this.#starting--;
        this.#breakPool(asError(e));
      }
    } else if (m.type === 'ready') {
      this.#starting--;
      this.#idle.push(slot);
      this.#dispatch();
    } else if (m.type === 'init-error') {
      this.#starting--;
      this.#breakPool(reviveError(m.error));
    } else {
      const job = slot.job;
      slot.job = undefined;
      this.#idle.push(slot);
      if (job !== undefined) {
        if (m.ok) job.resolve(m.result);
        else job.reject(reviveError(m.error));
      }
      this.#dispatch();
    }
  }

  /** A crashed worker fails its own job only; a replacement starts when work is waiting. */
  #onCrash(slot: Slot, e: Error): void {
    if (this.#closed) return;
    const i = this.#slots.indexOf(slot);
    if (i >= 0) this.#slots.splice(i, 1);
    const idle = this.#idle.indexOf(slot);
    if (idle >= 0) this.#idle.splice(idle, 1);
    if (slot.job === undefined && idle < 0) {
      // It died before it was ready: a worker that cannot start (a preload or flag that fails in
      // workers, a missing module) would fail the same way each time, so the pool breaks, typed,
      // instead of starting replacements for ever.
      this.#starting--;
      void slot.port?.terminate();
      this.#breakPool(new WorkerError('worker-crashed', `a worker could not start: ${e.message}`, { cause: e }));
      return;
    }
    slot.job?.reject(e);
    slot.job = undefined;
    void slot.port?.terminate();
    this.#dispatch();
  }

  /** The module cannot be loaded: every queued and future task fails with the same error. */
  #breakPool(e: Error): void {
    this.#broken = e;
    for (const job of this.#queue.splice(0)) job.reject(e);
  }
}

export function createExecutor(stage: PipeConfig): Executor | undefined {
  const t = stage.task;
  if (typeof t === 'function') return undefined;
  if (t.kind === 'worker') return new WorkerPoolExecutor(t, stage.concurrency);
  return t.create(stage.name, stage.concurrency);
}
