/**
 * Starting a module worker is the one thing that differs between runtimes: Deno and browsers have
 * `new Worker(url, { type: 'module' })`; Node 20 has `worker_threads`, where a short CommonJS
 * shim gives the module the web worker globals (`onmessage`, `postMessage`) it expects.
 */
import type { Worker as NodeWorker } from 'node:worker_threads';
import { runtimeName } from './detect.ts';

export interface WorkerPort {
  postMessage(message: unknown, transfer: Transferable[]): void;
  onMessage(handler: (data: unknown) => void): void;
  /** Uncaught errors and unexpected exits; not called after terminate(). */
  onError(handler: (error: Error) => void): void;
  terminate(): Promise<void>;
}


export async function startModuleWorker(url: URL): Promise<WorkerPort> {
  return runtimeName === 'node' ? startNodeWorker(url) : startWebWorker(url);
}

function startWebWorker(url: URL): WorkerPort {
  const w = new Worker(url, { type: 'module' });
  let terminated = false;
  return {
    postMessage: (m, t) => w.postMessage(m, t),
    onMessage: (h) => w.addEventListener('message', (e) => h(e.data)),
    onError: (h) => {
      w.addEventListener('error', (e) => {
        // Without preventDefault, Deno rethrows a worker's error in the parent and exits.
        e.preventDefault();
        if (!terminated) h(new Error(e.message || 'worker error'));
      });
      w.addEventListener('messageerror', () => {
        if (!terminated) h(new Error('worker message could not be deserialized'));
      });
    },
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
  const wt = (await import(/* @vite-ignore */ spec)) as { Worker: typeof NodeWorker };
  const w = new wt.Worker(nodeShim(url.href), { eval: true });
  let terminated = false;
  return {
    // Node's TransferListItem and the DOM's Transferable describe the same objects.
    postMessage: (m, t) => w.postMessage(m, t as unknown as Parameters<NodeWorker['postMessage']>[1]),
    onMessage: (h) => w.on('message', h),
    onError: (h) => {
      w.on('error', (e: Error) => {
        if (!terminated) h(e);
      });
      w.on('exit', (code: number) => {
        if (!terminated) h(new Error(`worker exited with code ${code}`));
      });
    },
    terminate: async () => {
      terminated = true;
      await w.terminate();
    },
  };
}
