// Everything that differs between browsers, Deno and Node lives in this folder: which runtime this
// is, how to read a file or a bundled text asset, and how to get a WebGPU adapter.

import { EnvironmentError } from '../errors/index.ts';
import { preferVulkanInDeno } from './deno-gpu.ts';
import { denoGlobal, runtimeName } from './detect.ts';

export { runtimeName, type RuntimeName } from './detect.ts';

/** Imports a module by a specifier bundlers must not follow (Node-only packages). */
function importHidden<T>(specifier: string): Promise<T> {
  return import(/* @vite-ignore */ /* webpackIgnore: true */ specifier) as Promise<T>;
}

/** Reads a text file shipped next to a module (WGSL sources), given `new URL(..., import.meta.url)`. */
export async function readText(url: URL): Promise<string> {
  if (denoGlobal) return denoGlobal.readTextFile(url);
  if (runtimeName === 'node' && url.protocol === 'file:') {
    const fs = await importHidden<{ readFile(u: URL, enc: 'utf8'): Promise<string> }>('node:fs/promises');
    return fs.readFile(url, 'utf8');
  }
  const response = await fetch(url);
  if (!response.ok) throw new EnvironmentError('asset-unavailable', `cannot load ${url.href}: HTTP ${response.status}`);
  return response.text();
}

export function hardwareConcurrency(): number {
  const n = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency;
  return n && n > 0 ? n : 2;
}

/**
 * The machine's logical cores: `navigator.hardwareConcurrency` in browsers and Deno; Node 20 has no
 * `navigator`, so there `os.availableParallelism()` (2 where neither answers).
 */
export function availableCores(): number {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const os =
    runtimeName === 'node' ? (proc?.getBuiltinModule?.('node:os') as { availableParallelism?: () => number } | undefined) : undefined;
  const n = os?.availableParallelism?.();
  return n && n > 0 ? n : hardwareConcurrency();
}

interface NodeWebGpu {
  create(options: string[]): GPU;
  globals: Record<string, unknown>;
}

/** The runtime's GPU entry point, or an error that says what to install or enable. */
export async function getGpu(): Promise<GPU> {
  if (runtimeName === 'node') {
    let webgpu: NodeWebGpu;
    try {
      webgpu = await importHidden<NodeWebGpu>('webgpu');
    } catch (cause) {
      throw new EnvironmentError(
        'missing-package',
        'tandem gpu (Node): the npm package "webgpu" (dawn.node) is required: npm install webgpu',
        {
          cause,
        },
      );
    }
    // dawn.node does not define the WebGPU constant globals (GPUBufferUsage, ...); shaders and
    // buffer code use them as in browsers.
    for (const [name, value] of Object.entries(webgpu.globals)) {
      if (!(name in globalThis)) Object.defineProperty(globalThis, name, { value, configurable: true, writable: true });
    }
    return webgpu.create([]);
  }
  if (denoGlobal) preferVulkanInDeno(denoGlobal as unknown as Parameters<typeof preferVulkanInDeno>[0]);
  const gpu = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
  if (!gpu) {
    throw new EnvironmentError(
      'no-webgpu',
      runtimeName === 'deno'
        ? 'tandem gpu (Deno): navigator.gpu is missing; use Deno ≥ 1.39 on a machine with a Vulkan driver (Mesa lavapipe works)'
        : 'tandem gpu (browser): navigator.gpu is missing; use a WebGPU browser (Chromium: --enable-unsafe-webgpu where it is not on by default)',
    );
  }
  return gpu;
}

/**
 * Whether queue.writeBuffer accepts a view of shared memory (wasm memory with threads). The spec
 * says it does (AllowSharedBufferSource) and browsers and Deno agree; dawn.node throws on it, and
 * probing it there has crashed the process, so Node is known not to.
 */
export const writeBufferTakesSharedMemory = runtimeName !== 'node';

/**
 * Lets many tasks listen to one AbortSignal. Node warns past 10 listeners per event target, but a
 * pipeline stage of concurrency 16 legitimately has 16 tasks honouring the run's signal.
 */
export function allowManyListeners(signal: AbortSignal): void {
  if (runtimeName !== 'node') return;
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const events = proc?.getBuiltinModule?.('node:events') as
    | { setMaxListeners?: (n: number, ...targets: EventTarget[]) => void }
    | undefined;
  events?.setMaxListeners?.(0, signal);
}

export function adapterHint(): string {
  switch (runtimeName) {
    case 'node':
      return 'Node needs a Vulkan driver dawn accepts: on Debian 12, mesa-vulkan-drivers ≥ 25 from bookworm-backports (scripts/apt-setup.sh installs it)';
    case 'deno':
      return 'Deno needs a Vulkan driver: on Debian, mesa-vulkan-drivers';
    default:
      return 'the browser offered no WebGPU adapter (headless Chromium: --enable-unsafe-webgpu; SwiftShader provides a CPU adapter)';
  }
}

export { cacheDir, env, exists, listDir, makeDir, readFile, writeFileAtomic, type DirEntry } from './files.ts';
export { createFileWriter, fileSize, openFileStream, removeFile, type FileWriter } from './file-streams.ts';
export { openFileRange, type FileRange } from './file-ranges.ts';

interface ProcessControl {
  argv: string[];
  exitCode?: number;
}
interface DenoControl {
  args: string[];
  exit(code: number): never;
}

/** The command-line arguments after the script name (Node and Deno). */
export function commandLineArgs(): string[] {
  const deno = (globalThis as unknown as { Deno?: DenoControl }).Deno;
  if (deno) return deno.args;
  return (globalThis as { process?: ProcessControl }).process?.argv.slice(2) ?? [];
}

/** Ends a command-line run with `code` once pending work is done (Node), or at once (Deno). */
export function finishProcess(code: number): void {
  const deno = (globalThis as unknown as { Deno?: DenoControl }).Deno;
  if (deno) {
    if (code !== 0) deno.exit(code);
    return;
  }
  const proc = (globalThis as { process?: ProcessControl }).process;
  if (proc) proc.exitCode = code;
}
export { crossOriginPthreadWorker, nodePthreadStarter, startModuleWorker, workerScriptUrl, type WorkerPort } from './worker.ts';
export { rerunWithFilteredStderr } from './quiet-stderr.ts';

/**
 * Runs `fn` with `navigator.gpu` present. Node 20 has no `navigator`; libraries that check for
 * WebGPU there (TensorFlow.js's WebGPU backend, when it is built) are shown `gpu` for the call and
 * the global is put back as it was afterwards. Elsewhere `fn` runs as it is.
 */
export async function withNavigatorGpu<T>(gpu: object, fn: () => Promise<T>): Promise<T> {
  const scope = globalThis as { navigator?: { gpu?: unknown } };
  if (runtimeName !== 'node' || scope.navigator?.gpu) return fn();
  const before = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  const navigator = Object.create(scope.navigator ?? null, { gpu: { value: gpu, configurable: true } });
  Object.defineProperty(globalThis, 'navigator', { value: navigator, configurable: true, writable: true });
  try {
    return await fn();
  } finally {
    if (before) Object.defineProperty(globalThis, 'navigator', before);
    else delete scope.navigator;
  }
}
