// @ts-check
/**
 * Worker side of the worker-pool executor. Plain JavaScript so that Node 20, Deno and browsers
 * load it unchanged (no TypeScript loader exists inside a Node 20 worker).
 *
 * Protocol, all plain objects:
 *   worker → host  {type:'loaded'}                            this module has run
 *   host → worker  {type:'init', module, export, transfer, init}
 *                  module: absolute URL; init: the task's setup value, given to the module's
 *                  `init` export (when it has one) before 'ready'
 *   worker → host  {type:'ready'} | {type:'init-error', error}
 *   host → worker  {type:'run', id, args}
 *   worker → host  {type:'result', id, ok:true, result} | {type:'result', id, ok:false, error}
 */

// The user's module is known only at run time. Vite and vitest rewrite `import()` expressions
// (vitest's browser mode wraps them in a helper that does not exist inside workers), so load it
// through a function the tooling leaves alone.
const importModule = /** @type {(url: string) => Promise<Record<string, unknown>>} */ (new Function('url', 'return import(url)'));
/**
 * This worker's global scope. The project's lib is the DOM's, which types `postMessage` as the
 * window's (with a target origin); a worker's takes the message and its transfer list.
 */
const scope = /** @type {{ postMessage(message: unknown, transfer?: Transferable[]): void }} */ (globalThis);

/** @type {((args: unknown) => unknown) | undefined} */
let task;
/** @type {Record<string, unknown> | undefined} */
let registered;

/**
 * For a task's own worker script (WorkerTask's `entry`), which imports this module and the task
 * module statically, so bundlers bundle both: the 'init' message then uses `mod` instead of
 * importing its URL.
 * @param {Record<string, unknown>} mod
 */
export function registerTaskModule(mod) {
  registered = mod;
}
let transfer = true;

/** @param {unknown} e */
function serializeError(e) {
  // A Tandem error's `code` crosses too, so the host can branch on it as it would locally.
  if (e instanceof Error)
    return { name: e.name, message: e.message, stack: e.stack, code: 'code' in e && typeof e.code === 'string' ? e.code : undefined };
  return { name: 'Error', message: String(e), stack: undefined, code: undefined };
}

/**
 * ArrayBuffers reachable from `value` (typed arrays, arrays and plain objects, 3 levels deep).
 * @param {unknown} value
 * @param {Set<ArrayBuffer>} out
 * @param {number} depth
 */
function collect(value, out, depth) {
  if (typeof value !== 'object' || value === null || depth > 3) return out;
  if (value instanceof ArrayBuffer) out.add(value);
  else if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer) out.add(value.buffer);
  } else if (Array.isArray(value)) for (const v of value) collect(v, out, depth + 1);
  else if (Object.getPrototypeOf(value) === Object.prototype) {
    for (const v of Object.values(value)) collect(v, out, depth + 1);
  }
  return out;
}

/**
 * The export the host named is a function: the task, called with each run's arguments.
 * @param {unknown} value
 * @returns {value is (args: unknown) => unknown}
 */
function isTask(value) {
  return typeof value === 'function';
}

/** @param {unknown} message @param {unknown} value */
function reply(message, value) {
  const list = transfer ? [...collect(value, new Set(), 0)] : [];
  try {
    scope.postMessage(message, list);
  } catch {
    // e.g. a buffer that cannot be transferred (wasm memory): fall back to copying.
    scope.postMessage(message);
  }
}

/** @param {MessageEvent} ev */
globalThis.onmessage = async (ev) => {
  const msg = ev.data;
  if (msg.type === 'init') {
    try {
      const mod = registered ?? (await importModule(msg.module));
      const fn = mod[msg.export];
      if (!isTask(fn)) throw new TypeError(`${msg.module} has no function export "${msg.export}"`);
      if (typeof mod.init === 'function') await mod.init(msg.init);
      task = fn;
      transfer = msg.transfer !== false;
      scope.postMessage({ type: 'ready' });
    } catch (e) {
      scope.postMessage({ type: 'init-error', error: serializeError(e) });
    }
    return;
  }
  if (msg.type === 'run' && task !== undefined) {
    try {
      const result = await task(msg.args);
      reply({ type: 'result', id: msg.id, ok: true, result }, result);
    } catch (e) {
      scope.postMessage({ type: 'result', id: msg.id, ok: false, error: serializeError(e) });
    }
  }
};

scope.postMessage({ type: 'loaded' });
