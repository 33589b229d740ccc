// Random-access reads of a local file for Node and Deno (streamed video decoding reads a window at
// an offset at a time). Browsers read File objects with Blob.slice instead.
import { EnvironmentError } from '../errors/index.ts';
import { typed } from './files.ts';
import { runtimeName } from './detect.ts';

export interface FileRange {
  readonly size: number;
  /** Up to `length` bytes from `offset`; fewer only at the end of the file. */
  read(offset: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

interface DenoFsFile {
  seek(offset: number, whence: number): Promise<number>;
  read(buffer: Uint8Array): Promise<number | null>;
  stat(): Promise<{ size: number }>;
  close(): void;
}
interface NodeFileHandle {
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<{ size: number }>;
  close(): Promise<void>;
}

export async function openFileRange(path: string): Promise<FileRange> {
  if (runtimeName === 'deno') {
    const deno = (globalThis as unknown as { Deno: { open(path: string): Promise<DenoFsFile> } }).Deno;
    const file = await typed<DenoFsFile>('open', path)(deno.open(path));
    const { size } = await typed<{ size: number }>('read', path)(file.stat());
    let queue = Promise.resolve();
    return {
      size,
      read(offset, length) {
        // seek + read is two calls on one cursor: serialise overlapping reads.
        const result = queue.then(async () => {
          const out = new Uint8Array(Math.max(0, Math.min(length, size - offset)));
          await typed<unknown>('read', path)(file.seek(offset, 0));
          let filled = 0;
          while (filled < out.length) {
            const n = await typed<number | null>('read', path)(file.read(out.subarray(filled)));
            if (n === null || n === 0) break;
            filled += n;
          }
          return out.subarray(0, filled);
        });
        queue = result.then(
          () => undefined,
          () => undefined,
        );
        return result;
      },
      close: async () => file.close(),
    };
  }
  if (runtimeName !== 'node')
    throw new EnvironmentError('no-local-files', 'openFileRange: local files are read in Node and Deno; in a browser use a File');
  // A computed specifier keeps bundlers from pulling node:fs into browser builds.
  const spec = 'node:fs/promises';
  const fs = (await import(/* @vite-ignore */ /* webpackIgnore: true */ spec)) as unknown as {
    open(path: string, flags: string): Promise<NodeFileHandle>;
  };
  const handle = await typed<NodeFileHandle>('open', path)(fs.open(path, 'r'));
  const { size } = await typed<{ size: number }>('read', path)(handle.stat());
  return {
    size,
    async read(offset, length) {
      const out = new Uint8Array(Math.max(0, Math.min(length, size - offset)));
      let filled = 0;
      while (filled < out.length) {
        const { bytesRead } = await typed<{ bytesRead: number }>(
          'read',
          path,
        )(handle.read(out, filled, out.length - filled, offset + filled));
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return out.subarray(0, filled);
    },
    close: () => handle.close(),
  };
}
