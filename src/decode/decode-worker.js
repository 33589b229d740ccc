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

// Vite and vitest rewrite `import()` expressions; this form they leave alone.
const importModule = /** @type {(url: string) => Promise<{ default: (o: object) => Promise<any> }>} */ (
  new Function('url', 'return import(url)')
);

/** @type {{ words: number, jobBytes: number, padding: number, status: number, src: number, srcLen: number, dst: number, maxFrames: number, select: number, ptsOut: number, onPoolThread: number, kind: number, videoKind: number, demuxKind: number, result: number, resultLen: number, corrupt: number, noMemory: number }} */
let layout;
/** @type {string} */
let moduleUrl;
/** Where the module's .wasm is: bundlers move it, and the module would look beside itself. @type {string} */
let wasmUrl;
/** @type {any} */
let wasm;
/** Buffers in this instance's memory, grown on demand: [pointer, capacity]. */
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

/** @param {keyof typeof buffers} name @param {number} bytes */
function reserve(name, bytes) {
  const b = buffers[name];
  if (b[1] < bytes) {
    if (b[0]) wasm._free(b[0]);
    b[0] = b[1] = 0;
    const capacity = Math.max(bytes, 64 * 1024, b[1] * 2);
    const ptr = wasm._malloc(capacity);
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
  const text = new TextEncoder().encode(message.slice(0, 90));
  record.fill(0, layout.words * 4);
  record.set(text, layout.words * 4);
  return record;
}

/** @param {{ id: number, record: Uint8Array, input: Uint8Array, select: Int32Array | null, outputBytes: number }} job */
function run(job) {
  const { record, input, select, outputBytes } = job;
  if (!wasm)
    return { record: fail(record, layout.noMemory, 'the decode instance could not be reloaded'), output: new Uint8Array(0), pts: null };
  const request = new Int32Array(record.buffer, record.byteOffset, layout.words);
  const isVideo = request[layout.kind] === layout.videoKind;
  const frames = isVideo ? request[layout.maxFrames] : 0;
  let jobPtr, inputPtr, outputPtr, auxPtr;
  try {
    jobPtr = reserve('job', layout.jobBytes);
    inputPtr = reserve('input', input.length + layout.padding);
    outputPtr = reserve('output', Math.max(outputBytes, 4));
    auxPtr = reserve('aux', Math.max(8 * frames, 8));
  } catch (error) {
    return {
      record: fail(record, layout.noMemory, String(/** @type {Error} */ (error).message ?? error)),
      output: new Uint8Array(0),
      pts: null,
    };
  }
  let heap = wasm.HEAPU8;
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
  wasm._td_decode_now(jobPtr);
  heap = wasm.HEAPU8; // memory may have grown while decoding
  const out = heap.slice(jobPtr, jobPtr + layout.jobBytes);
  const result = new Int32Array(out.buffer, 0, layout.words);
  result[layout.onPoolThread] = 1;
  if (request[layout.kind] === layout.demuxKind) {
    // The C side malloc'd the result in this instance: hand a copy back and free it here.
    const block = result[layout.result];
    const output = block ? heap.slice(block, block + result[layout.resultLen]) : new Uint8Array(0);
    if (block) wasm._free(block);
    result[layout.result] = 0;
    return { record: out, output, pts: null };
  }
  const output = heap.slice(outputPtr, outputPtr + outputBytes);
  const pts = isVideo ? new Int32Array(heap.buffer.slice(auxPtr + 4 * frames, auxPtr + 8 * frames)) : null;
  return { record: out, output, pts };
}

/** @param {{ data: any }} event */
globalThis.onmessage = (event) => {
  const message = event.data;
  if (message.type === 'init') {
    layout = message.layout;
    moduleUrl = message.moduleUrl;
    wasmUrl = message.wasmUrl;
    chain = chain.then(load).then(
      () => postMessage({ type: 'ready' }),
      (error) => postMessage({ type: 'init-error', message: String(error?.message ?? error) }),
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
        record: fail(message.record, layout.corrupt, `decoder trapped: ${String(/** @type {Error} */ (error)?.message ?? error)}`),
        output: new Uint8Array(0),
        pts: null,
      };
      wasm = undefined;
      await load().catch(() => {});
    }
    const transfer = [result.record.buffer, result.output.buffer];
    if (result.pts) transfer.push(result.pts.buffer);
    postMessage({ type: 'done', id: message.id, ...result }, /** @type {any} */ (transfer));
  });
};

postMessage({ type: 'loaded' });
