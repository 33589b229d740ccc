// @ts-check
/**
 * One single-threaded decode instance, for the fallback pool (pages without SharedArrayBuffer).
 * Plain JavaScript so that Node 20 worker_threads, Deno and browsers load it unchanged.
 *
 * Protocol (src/decode/workers.ts is the other side):
 *   worker → host  {type:'loaded'}        this script has run (Node's shim drops earlier messages)
 *   host → worker  {type:'init', moduleUrl, wasmUrl, layout}
 *   worker → host  {type:'ready'} | {type:'init-error', message}
 *   host → worker  {type:'job', id, record, input, select, outputBytes}
 *   worker → host  {type:'done', id, record, output, pts}
 * `record` is the job record's bytes (request in, result and message out); `output` the bytes
 * the decoder wrote at `dst`, exactly `outputBytes` long, or for a demux job its result block
 * (freed here); `pts` the video timestamps, if any.
 */

/**
 * The decode module's instance: its heap and the exports this worker calls.
 * @typedef {{ HEAPU8: Uint8Array, _malloc(bytes: number): number, _free(ptr: number): void, _td_decode_now(jobPtr: number): void }} DecodeInstance
 */
/**
 * The record fields this worker touches, as the host sends them (LAYOUT in src/decode/workers.ts).
 * @typedef {{ words: number, jobBytes: number, padding: number, status: number, src: number, srcLen: number, dst: number, maxFrames: number, select: number, ptsOut: number, onPoolThread: number, kind: number, videoKind: number, demuxKind: number, result: number, resultLen: number, corrupt: number, noMemory: number }} Layout
 */
/** @typedef {{ id: number, record: Uint8Array, input: Uint8Array, select: Int32Array | null, outputBytes: number }} Job */
/** @typedef {{ type: 'init', moduleUrl: string, wasmUrl: string, layout: Layout } | ({ type: 'job' } & Job)} HostMessage */

// Vite and vitest rewrite `import()` expressions; this form they leave alone.
const importModule = /** @type {(url: string) => Promise<{ default: (o: object) => Promise<DecodeInstance> }>} */ (
  new Function('url', 'return import(url)')
);
/**
 * This worker's global scope. The project's lib is the DOM's, which types `postMessage` as the
 * window's (with a target origin); a worker's takes the message and its transfer list.
 */
const scope = /** @type {{ postMessage(message: unknown, transfer?: Transferable[]): void }} */ (globalThis);

/** @type {Layout} */
let layout;
/** @type {string} */
let moduleUrl;
/** Where the module's .wasm is: bundlers move it, and the module would look beside itself. @type {string} */
let wasmUrl;
/** @type {DecodeInstance | undefined} */
let wasm;
/** Buffers in this instance's memory, grown on demand: [pointer, capacity]. @type {Record<'job' | 'input' | 'output' | 'aux', [ptr: number, capacity: number]>} */
const buffers = { job: [0, 0], input: [0, 0], output: [0, 0], aux: [0, 0] };
/** Jobs run one after another, also across a module reload. */
let chain = Promise.resolve();

async function load() {
  const { default: create } = await importModule(moduleUrl);
  wasm = await create({
    printErr: (/** @type {string} */ line) => console.warn(`[tandem decode worker] ${line}`),
    locateFile: (/** @type {string} */ file, /** @type {string} */ prefix) => (file.endsWith('.wasm') && wasmUrl ? wasmUrl : prefix + file),
  });
  for (const b of Object.values(buffers)) b[0] = b[1] = 0;
}

/**
 * The message field's bytes, mirroring writeJobMessage in src/decode/abi.ts (which a worker cannot
 * import): the field is the record past its words (JOB_MESSAGE_BYTES), and the message is whole
 * UTF-8 characters in at most all but its last byte, the rest zero. Bounded in bytes, not
 * characters, so text of any script stays inside the record and keeps its NUL.
 * @param {Uint8Array} record @param {string} message
 */
function writeMessage(record, message) {
  const field = record.subarray(layout.words * 4, layout.jobBytes);
  field.fill(0);
  if (field.length > 0) new TextEncoder().encodeInto(message, field.subarray(0, field.length - 1));
}

/**
 * Most UTF-8 bytes of the message an 'init-error' reply carries. Not a record's message, so not
 * held to its field, but bounded the same way (see writeMessage).
 */
const INIT_ERROR_BYTES = 1024;

/**
 * `text` cut to whole UTF-8 characters in at most `maxBytes` bytes (encodeInto never splits one).
 * @param {string} text @param {number} maxBytes
 */
function boundUtf8(text, maxBytes) {
  const bytes = new Uint8Array(maxBytes);
  const { written } = new TextEncoder().encodeInto(text, bytes);
  return new TextDecoder().decode(bytes.subarray(0, written));
}

/** The error's message (or the thrown value) as text. @param {unknown} error */
function errorText(error) {
  const message = typeof error === 'object' && error !== null && 'message' in error ? error.message : undefined;
  return String(message ?? error);
}

/**
 * Word `index` of a job record; the host builds records and layout from the same abi.ts, so a
 * missing word means the two disagree.
 * @param {Int32Array} words @param {number} index
 */
function word(words, index) {
  const value = words[index];
  if (value === undefined) throw new RangeError(`decode worker: job record has no word ${index} (record and layout disagree)`);
  return value;
}

/** @param {DecodeInstance} instance @param {keyof typeof buffers} name @param {number} bytes */
function reserve(instance, name, bytes) {
  const b = buffers[name];
  if (b[1] < bytes) {
    if (b[0]) instance._free(b[0]);
    b[0] = b[1] = 0;
    const capacity = Math.max(bytes, 64 * 1024, b[1] * 2);
    const ptr = instance._malloc(capacity);
    if (!ptr) throw new RangeError(`cannot allocate ${capacity} bytes in the decode worker`);
    b[0] = ptr;
    b[1] = capacity;
  }
  return b[0];
}

/** @param {Uint8Array} record @param {number} status @param {string} message */
function fail(record, status, message) {
  const words = new Int32Array(record.buffer, record.byteOffset, layout.words);
  words[layout.status] = status;
  writeMessage(record, message);
  return record;
}

/** @param {Job} job */
function run(job) {
  const { record, input, select, outputBytes } = job;
  const instance = wasm;
  if (!instance)
    return { record: fail(record, layout.noMemory, 'the decode instance could not be reloaded'), output: new Uint8Array(0), pts: null };
  const request = new Int32Array(record.buffer, record.byteOffset, layout.words);
  const isVideo = request[layout.kind] === layout.videoKind;
  const frames = isVideo ? word(request, layout.maxFrames) : 0;
  /** @type {number} */ let jobPtr;
  /** @type {number} */ let inputPtr;
  /** @type {number} */ let outputPtr;
  /** @type {number} */ let auxPtr;
  try {
    jobPtr = reserve(instance, 'job', layout.jobBytes);
    inputPtr = reserve(instance, 'input', input.length + layout.padding);
    outputPtr = reserve(instance, 'output', Math.max(outputBytes, 4));
    auxPtr = reserve(instance, 'aux', Math.max(8 * frames, 8));
  } catch (error) {
    return {
      record: fail(record, layout.noMemory, errorText(error)),
      output: new Uint8Array(0),
      pts: null,
    };
  }
  let heap = instance.HEAPU8;
  heap.set(input, inputPtr);
  heap.fill(0, inputPtr + input.length, inputPtr + input.length + layout.padding);
  heap.fill(0, outputPtr, outputPtr + outputBytes);
  heap.set(record, jobPtr);
  const words = new Int32Array(heap.buffer, jobPtr, layout.words);
  words[layout.src] = inputPtr;
  words[layout.srcLen] = input.length;
  words[layout.dst] = outputPtr;
  if (isVideo) {
    if (select) new Int32Array(heap.buffer, auxPtr, frames).set(select);
    words[layout.select] = auxPtr;
    words[layout.ptsOut] = auxPtr + 4 * frames;
  }
  instance._td_decode_now(jobPtr);
  heap = instance.HEAPU8; // memory may have grown while decoding
  const out = heap.slice(jobPtr, jobPtr + layout.jobBytes);
  const result = new Int32Array(out.buffer, 0, layout.words);
  result[layout.onPoolThread] = 1;
  if (request[layout.kind] === layout.demuxKind) {
    // The C side malloc'd the result in this instance: hand a copy back and free it here.
    const block = result[layout.result];
    const output = block ? heap.slice(block, block + word(result, layout.resultLen)) : new Uint8Array(0);
    if (block) instance._free(block);
    result[layout.result] = 0;
    return { record: out, output, pts: null };
  }
  const output = heap.slice(outputPtr, outputPtr + outputBytes);
  const pts = isVideo ? new Int32Array(heap.buffer.slice(auxPtr + 4 * frames, auxPtr + 8 * frames)) : null;
  return { record: out, output, pts };
}

/** @param {{ data: HostMessage }} event */
globalThis.onmessage = (event) => {
  const message = event.data;
  if (message.type === 'init') {
    layout = message.layout;
    moduleUrl = message.moduleUrl;
    wasmUrl = message.wasmUrl;
    chain = chain.then(load).then(
      () => scope.postMessage({ type: 'ready' }),
      (error) => scope.postMessage({ type: 'init-error', message: boundUtf8(errorText(error), INIT_ERROR_BYTES) }),
    );
    return;
  }
  if (message.type !== 'job') return;
  chain = chain.then(async () => {
    let result;
    try {
      result = run(message);
    } catch (error) {
      // A trap may leave the instance's heap inconsistent: report it for this item, start afresh.
      result = {
        record: fail(message.record, layout.corrupt, `decoder trapped: ${errorText(error)}`),
        output: new Uint8Array(0),
        pts: null,
      };
      wasm = undefined;
      await load().catch(() => {});
    }
    /** @type {Transferable[]} */
    const transfer = [result.record.buffer, result.output.buffer];
    if (result.pts) transfer.push(result.pts.buffer);
    scope.postMessage({ type: 'done', id: message.id, ...result }, transfer);
  });
};

scope.postMessage({ type: 'loaded' });
