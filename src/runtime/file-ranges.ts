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

interface NodeFileHandle {
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<{ size: number }>;
  close(): Promise<void>;
}

export async function openFileRange(path: string): Promise<FileRange> {
  if (runtimeName !== 'node' && runtimeName !== 'deno')
    throw new EnvironmentError('no-local-files', 'openFileRange: local files are read in Node and Deno; in a browser use a File');
  // Deno too reads through its node:fs: a positioned read needs no seek, so reads need not queue
  // behind one cursor, and takes about half the time of an FsFile's seek and read (1776 reads of
  // 64 bytes in bench/matroska-reads.ts: 85 ms, against 158 ms before; Deno 2.9 on Zen 4).
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
