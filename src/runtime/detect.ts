// Which runtime this is, decided once by feature detection. Deno also defines `process` for npm
// compatibility, so it is ruled out first.

export type RuntimeName = 'browser' | 'deno' | 'node';

export interface DenoLike {
  readTextFile(path: string | URL): Promise<string>;
  readFile(path: string | URL): Promise<Uint8Array>;
}
interface ProcessLike {
  versions?: { node?: string };
}

export const denoGlobal = (globalThis as unknown as { Deno?: DenoLike }).Deno;
const processGlobal = (globalThis as { process?: ProcessLike }).process;

export const runtimeName: RuntimeName = denoGlobal ? 'deno' : processGlobal?.versions?.node ? 'node' : 'browser';
