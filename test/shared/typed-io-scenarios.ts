// What the file system and a worker's error event say reaches callers as Tandem's typed errors:
// a missing or unreadable file is an item's failure with a FileError (same code in Node and Deno),
// a folder a call needs is a thrown FileError, and a worker that dies as it loads is a WorkerError;
// each keeps the system's own error as `cause`. Shared by the Node and Deno tiers, which supply
// a temporary folder (`tempDir`).
import { DecodePool } from '../../src/decode/index.ts';
import { FileError, TandemError, WorkerError } from '../../src/errors/index.ts';
import { loader } from '../../src/loader/index.ts';
import { makeDir, openFileRange, openFileStream, startModuleWorker, writeFileAtomic } from '../../src/runtime/index.ts';
import { isFailure, listImageFolder, loadFiles } from '../../src/sources/index.ts';
import { encodeJpeg, renderSample } from '../../src/synthetic/index.ts';
import { assertEqual, check, rejectsWith } from './assert.ts';
import { collect } from './async.ts';

const jpeg = (i: number) => {
  const s = renderSample(1, i, { width: 32, height: 32 });
  return encodeJpeg(s.rgb, s.width, s.height);
};

/** A FileError of `code` about `path`, with the system's error kept as its cause. */
function isFileError(error: unknown, code: string, path: string): error is FileError {
  return (
    error instanceof FileError &&
    error instanceof TandemError &&
    error.code === code &&
    error.path === path &&
    error.cause instanceof Error &&
    !(error.cause instanceof TandemError) &&
    error.message.includes(path)
  );
}

export function typedIoScenarios(tempDir: () => Promise<string>): Record<string, () => Promise<void>> {
  return {
    async 'loadFiles: a missing file and a folder in the list are per-item read failures with a FileError (not-found, is-a-directory)'() {
      const dir = await tempDir();
      await writeFileAtomic(`${dir}/a.jpg`, jpeg(0));
      await makeDir(`${dir}/folder.jpg`);
      const results = await collect(loadFiles([`${dir}/a.jpg`, `${dir}/missing.jpg`, `${dir}/folder.jpg`]));
      check(!isFailure(results[0]!), 'the file that is there is read');
      const [missing, folder] = [results[1]!, results[2]!];
      check(isFailure(missing) && missing.stage === 'read' && missing.reason === 'not-found', `missing: ${JSON.stringify(missing)}`);
      check(isFileError(missing.error, 'not-found', `${dir}/missing.jpg`), `missing: ${String(missing.error)}`);
      check(isFailure(folder) && folder.stage === 'read' && folder.reason === 'is-a-directory', `folder: ${JSON.stringify(folder)}`);
      check(isFileError(folder.error, 'is-a-directory', `${dir}/folder.jpg`), `folder: ${String(folder.error)}`);
      check((missing.error as FileError).operation === 'read', 'the operation is named');
    },

    async 'loader(): a listed path that is missing is a failure at stage read with a FileError; the others are delivered'() {
      const dir = await tempDir();
      const paths = [0, 1, 2].map((i) => `${dir}/${i}.jpg`);
      for (const [i, path] of paths.entries()) await writeFileAtomic(path, jpeg(i));
      const gone = `${dir}/gone.jpg`;
      await using pool = await DecodePool.create({ threads: 1 });
      await using data = loader([paths[0]!, gone, paths[1]!, paths[2]!], { batchSize: 3, size: 16, pool });
      const keys: string[] = [];
      for await (const batch of data) {
        keys.push(...batch.keys);
        batch.release();
      }
      assertEqual(keys, paths, 'every readable file once, in order');
      const failures = data.failures();
      check(failures.length === 1 && failures[0]!.key === gone && failures[0]!.stage === 'read', `failures: ${JSON.stringify(failures)}`);
      check(isFileError(failures[0]!.error, 'not-found', gone), `a typed read error: ${String(failures[0]!.error)}`);
    },

    async 'listImageFolder: a missing folder rejects with a FileError (not-found, list), not the system error'() {
      const dir = await tempDir();
      const error = await rejectsWith(
        listImageFolder(`${dir}/nowhere`),
        (e) => isFileError(e, 'not-found', `${dir}/nowhere`) && e.operation === 'list',
        'listing a missing folder',
      );
      check(error instanceof FileError, 'typed');
      // A file where the root folder should be.
      await writeFileAtomic(`${dir}/file`, jpeg(0));
      await rejectsWith(listImageFolder(`${dir}/file`), (e) => isFileError(e, 'not-a-directory', `${dir}/file`), 'listing a file');
    },

    async 'streamed and ranged reads of a missing file (shards, caches) reject with a FileError (not-found, open)'() {
      const dir = await tempDir();
      const gone = `${dir}/gone.tar`;
      for (const [what, open] of [
        ['a file stream', () => openFileStream(gone)],
        ['a file range', () => openFileRange(gone)],
      ] as const)
        await rejectsWith(open(), (e) => isFileError(e, 'not-found', gone) && e.operation === 'open', what);
    },

    async 'a worker whose script throws as it loads reports a WorkerError (worker-crashed) through its error event'() {
      const dir = await tempDir();
      const script = `${dir}/throws.mjs`;
      await writeFileAtomic(script, new TextEncoder().encode("throw new TypeError('thrown while loading');\n"));
      const port = await startModuleWorker(new URL(`file://${script}`));
      try {
        const error = await new Promise<Error>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('no error event within 20 s')), 20_000);
          port.onError((e) => {
            clearTimeout(timer);
            resolve(e);
          });
        });
        check(error instanceof WorkerError && error.code === 'worker-crashed', `got ${error.name}: ${error.message}`);
        check(error.message.includes('thrown while loading'), `the thrown message is kept: ${error.message}`);
      } finally {
        await port.terminate();
      }
    },
  };
}
