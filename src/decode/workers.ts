import { Field, INPUT_PADDING, JOB_BYTES, JOB_WORDS, JobKind, JobState, STATUS_CODES, writeJobMessage } from './abi.ts';
import type { DecodeBackend, JobSlot } from './backend.ts';
import { DecodeError } from './errors.ts';
import { loadSingleModule, type SingleModule } from './module.ts';
import { startModuleWorker, type WorkerPort } from '../runtime/index.ts';

const STATUS_CORRUPT = STATUS_CODES.indexOf('corrupt');
const STATUS_NO_MEMORY = STATUS_CODES.indexOf('out-of-memory');
const STATUS_BAD_REQUEST = STATUS_CODES.indexOf('bad-request');
const STATUS_OVER_BUDGET = STATUS_CODES.indexOf('over-budget');
const STATUS_CANCELLED = STATUS_CODES.indexOf('cancelled');
/** Largest output one fallback job may produce (the worker allocates it in its own memory). */
const MAX_OUTPUT_BYTES = 1 << 30;

interface Reply {
  type: 'loaded' | 'ready' | 'init-error' | 'done';
  id?: number;
  message?: string;
  record?: Uint8Array;
  output?: Uint8Array;
  pts?: Int32Array | null;
}

interface Job {
  id: number;
  slot: JobSlot;
  bytes: Uint8Array;
  done: () => void;
  /** Settles when done() has been called. */
  finished: Promise<void>;
}

interface DecodeWorker {
  port: WorkerPort;
  job: Job | undefined;
}

/**
 * The fallback where wasm threads cannot share memory (a page without cross-origin isolation):
 * one single-threaded decode instance per worker. Records and targets live in a plain module
 * instance on the caller's thread; each job's input goes to an idle worker, whose output is
 * copied back into the target. One copy more than the pthreads backend, and the same results.
 */
export class WorkerBackend implements DecodeBackend {
  readonly mode = 'workers';
  #local: SingleModule;
  #idle: DecodeWorker[] = [];
  #all = new Set<DecodeWorker>();
  #queue: Job[] = [];
  #nextId = 1;
  #closed = false;

  readonly #warn: (message: string) => void;
  /** The single-threaded module each worker loads, and its .wasm. */
  readonly #urls: { moduleUrl: string; wasmUrl: string };

  private constructor(
    local: SingleModule,
    readonly threads: number,
    warn: (message: string) => void,
    base: URL | undefined,
  ) {
    this.#local = local;
    this.#warn = warn;
    // Both URLs literal by default, so that bundlers emit both files (the .wasm is not found next
    // to a module a bundler copied as an asset).
    this.#urls = base
      ? { moduleUrl: new URL('tandem-decode-st.mjs', base).href, wasmUrl: new URL('tandem-decode-st.wasm', base).href }
      : {
          moduleUrl: new URL('../../wasm/dist/tandem-decode-st.mjs', import.meta.url).href,
          wasmUrl: new URL('../../wasm/dist/tandem-decode-st.wasm', import.meta.url).href,
        };
  }

  static async create(threads: number, warn: (message: string) => void, base?: URL): Promise<WorkerBackend> {
    const backend = new WorkerBackend(await loadSingleModule(warn, base), threads, warn, base);
    try {
      await Promise.all(Array.from({ length: threads }, () => backend.#startWorker()));
    } catch (error) {
      await backend.close();
      throw error;
    }
    return backend;
  }

  get memory(): WebAssembly.Memory {
    return this.#local.memory;
  }

  malloc(bytes: number): number {
    return this.#local.malloc(bytes);
  }

  free(ptr: number): void {
    this.#local.exports._free(ptr);
  }

  heapBytes(): number {
    return this.#local.exports._td_heap_in_use();
  }

  execute(slot: JobSlot, bytes: Uint8Array): Promise<void> {
    let done = () => {};
    const finished = new Promise<void>((resolve) => (done = resolve));
    this.#queue.push({ id: this.#nextId++, slot, bytes, done, finished });
    this.#dispatch();
    return finished;
  }

  abandon(slot: JobSlot): boolean {
    const worker = [...this.#all].find((w) => w.job?.slot === slot);
    if (!worker) return false;
    this.#replace(worker, STATUS_OVER_BUDGET, 'the job ran past its time limit; its worker was terminated');
    return true;
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) this.#complete(job, STATUS_CANCELLED, 'decode pool stopped before this job ran');
    // The jobs running now end on their own (a reply, or a worker replaced past its deadline).
    await Promise.all([...this.#all].map((w) => w.job?.finished));
    await Promise.all([...this.#all].map((w) => w.port.terminate()));
    this.#all.clear();
    this.#idle = [];
  }

  liveWorkers(): number {
    return this.#all.size;
  }

  async #startWorker(): Promise<void> {
    // A worker that cannot start (its script missing, moved by a bundler, or throwing as it loads)
    // leaves the pool without its decoder, as a module that cannot load does: the same code.
    const unavailable = (cause: unknown) =>
      new DecodeError('module-unavailable', `decode worker could not start: ${cause instanceof Error ? cause.message : String(cause)}`, {
        cause,
      });
    const port = await startModuleWorker(new URL('./decode-worker.js', import.meta.url)).catch((e: unknown) =>
      Promise.reject(unavailable(e)),
    );
    const worker: DecodeWorker = { port, job: undefined };
    this.#all.add(worker);
    let ready = false;
    await new Promise<void>((resolve, reject) => {
      port.onError((error) => (ready ? this.#workerDied(worker, error) : reject(unavailable(error))));
      port.onMessage((data) => {
        const reply = data as Reply;
        if (reply.type === 'loaded') {
          port.postMessage({ type: 'init', ...this.#urls, layout: LAYOUT }, []);
        } else if (reply.type === 'ready') {
          ready = true;
          resolve();
        } else if (reply.type === 'init-error')
          reject(new DecodeError('module-unavailable', `decode worker could not load its module: ${reply.message}`));
        else this.#finish(worker, reply);
      });
    });
    if (this.#closed) {
      // A replacement that finished starting after close(): nothing will use or end it otherwise.
      this.#all.delete(worker);
      await port.terminate();
      return;
    }
    this.#idle.push(worker);
    this.#dispatch();
  }

  #dispatch(): void {
    while (this.#idle.length > 0 && this.#queue.length > 0) {
      const worker = this.#idle.pop()!;
      const job = this.#queue.shift()!;
      const w = job.slot.words;
      const outputBytes = outputSize(w);
      if (!(outputBytes >= 0 && outputBytes <= MAX_OUTPUT_BYTES)) {
        this.#idle.push(worker);
        this.#complete(job, STATUS_BAD_REQUEST, `output of ${outputBytes} bytes is over the fallback limit`);
        continue;
      }
      const video = w[Field.Kind] === JobKind.Video;
      const frames = video ? (w[Field.MaxFrames] ?? 0) : 0;
      const record = new Uint8Array(this.memory.buffer, job.slot.ptr, JOB_BYTES).slice();
      const select = video ? new Int32Array(this.memory.buffer, w[Field.Select] ?? 0, frames).slice() : null;
      const input = new Uint8Array(job.bytes); // a copy (slice() of a Node Buffer is a view, and the transfer would detach the caller's bytes)
      worker.job = job;
      w[Field.State] = JobState.Running;
      const transfer: Transferable[] = [record.buffer, input.buffer];
      if (select) transfer.push(select.buffer);
      worker.port.postMessage({ type: 'job', id: job.id, record, input, select, outputBytes }, transfer);
    }
  }

  #finish(worker: DecodeWorker, reply: Reply): void {
    const job = worker.job;
    if (!job || reply.id !== job.id || !reply.record) return;
    worker.job = undefined;
    const w = job.slot.words;
    const dst = w[Field.Dst] ?? 0;
    const ptsOut = w[Field.PtsOut] ?? 0;
    const heap = new Uint8Array(this.memory.buffer);
    heap.set(reply.record.subarray(0, JOB_BYTES), job.slot.ptr);
    const result = new Int32Array(this.memory.buffer, job.slot.ptr, JOB_WORDS);
    if (isDemux(result)) this.#placeDemuxResult(job.slot.ptr, reply.output);
    else if (result[Field.Status] === 0 && reply.output) heap.set(reply.output, dst);
    if (result[Field.Status] === 0 && reply.pts) new Int32Array(this.memory.buffer, ptsOut, reply.pts.length).set(reply.pts);
    job.done();
    if (!this.#closed) this.#idle.push(worker);
    this.#dispatch();
  }

  /**
   * A demux job's result block came back as the worker's copy (the worker freed its own): it goes
   * into a block of this memory, which the pool reads and frees as in the pthreads mode.
   */
  #placeDemuxResult(recordPtr: number, output: Uint8Array | undefined): void {
    const words = new Int32Array(this.memory.buffer, recordPtr, JOB_WORDS);
    words[Field.Result] = 0;
    if (words[Field.Status] !== 0) return;
    if (!output || output.length !== words[Field.ResultLen]) {
      words[Field.Status] = STATUS_CORRUPT;
      writeJobMessage(new Uint8Array(this.memory.buffer), recordPtr, 'the decode worker returned no demux result');
      return;
    }
    let block: number;
    try {
      block = this.malloc(output.length);
    } catch (error) {
      const again = new Int32Array(this.memory.buffer, recordPtr, JOB_WORDS);
      again[Field.Status] = STATUS_NO_MEMORY;
      writeJobMessage(new Uint8Array(this.memory.buffer), recordPtr, `cannot hold the demux result: ${String(error)}`);
      return;
    }
    new Uint8Array(this.memory.buffer).set(output, block);
    new Int32Array(this.memory.buffer, recordPtr, JOB_WORDS)[Field.Result] = block;
  }

  /** A worker that crashed (out of memory, killed) fails its item and is replaced. */
  #workerDied(worker: DecodeWorker, error: Error): void {
    this.#replace(worker, STATUS_NO_MEMORY, `decode worker died: ${error.message}`);
  }

  #replace(worker: DecodeWorker, status: number, message: string): void {
    const job = worker.job;
    worker.job = undefined;
    this.#all.delete(worker);
    this.#idle = this.#idle.filter((w) => w !== worker);
    void worker.port.terminate();
    if (job) this.#complete(job, status, message);
    if (!this.#closed) this.#startWorker().catch((e: unknown) => this.#warn(`could not replace a decode worker: ${String(e)}`));
  }

  #complete(job: Job, status: number, message: string): void {
    const heap = new Uint8Array(this.memory.buffer);
    const words = new Int32Array(this.memory.buffer, job.slot.ptr, JOB_WORDS);
    words[Field.Status] = status;
    writeJobMessage(heap, job.slot.ptr, message);
    job.done();
  }
}

function isDemux(w: Int32Array): boolean {
  return w[Field.Kind] === JobKind.VideoDemux || w[Field.Kind] === JobKind.VideoDemuxStream;
}

/** Bytes the decoder writes at `dst` for this request (demux jobs: none; their result is a block of its own). */
function outputSize(w: Int32Array): number {
  const kind = w[Field.Kind];
  if (isDemux(w)) return 0;
  const channels = w[Field.Channels] ?? 0;
  if (kind === JobKind.Audio) return (w[Field.MaxFrames] ?? 0) * channels * 4;
  const frame = (w[Field.DstW] ?? 0) * (w[Field.DstH] ?? 0) * channels;
  return kind === JobKind.Video ? frame * (w[Field.MaxFrames] ?? 0) : frame;
}

/** The record fields the worker touches, from the one definition in abi.ts. */
const LAYOUT = {
  words: JOB_WORDS,
  jobBytes: JOB_BYTES,
  padding: INPUT_PADDING,
  status: Field.Status,
  src: Field.Src,
  srcLen: Field.SrcLen,
  dst: Field.Dst,
  maxFrames: Field.MaxFrames,
  select: Field.Select,
  ptsOut: Field.PtsOut,
  onPoolThread: Field.OnPoolThread,
  kind: Field.Kind,
  videoKind: JobKind.Video,
  demuxKind: JobKind.VideoDemux,
  result: Field.Result,
  resultLen: Field.ResultLen,
  corrupt: STATUS_CORRUPT,
  noMemory: STATUS_NO_MEMORY,
};
