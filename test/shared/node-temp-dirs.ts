// Temporary folders for the Node tiers' scenarios, removed after the file's tests (vitest afterAll).
// Node only (node:fs); the Deno tier's are in deno-serve.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll } from 'vitest';

/** Gives a function that makes a folder `prefix…` in the OS's temporary folder; all are removed in afterAll. */
export function useTempDirs(prefix: string): () => Promise<string> {
  const made: string[] = [];
  afterAll(async () => {
    for (const dir of made) await rm(dir, { recursive: true, force: true });
  });
  return async () => {
    const dir = await mkdtemp(`${tmpdir()}/${prefix}`);
    made.push(dir);
    return dir;
  };
}
