// Errors from the file system and from workers' error events, as a Node caller meets them: typed,
// with the original as `cause` (test/shared/typed-io-scenarios.ts, also run by the Deno tier), and a
// decode pool in 'workers' mode whose workers cannot start failing as module-unavailable.
import { writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { describe, expect, test, vi } from 'vitest';
import { DecodeError, DecodePool } from '../../src/decode/index.ts';
import { TandemError, WorkerError } from '../../src/errors/index.ts';
import { typedIoScenarios } from '../shared/typed-io-scenarios.ts';
import { useTempDirs } from '../shared/node-temp-dirs.ts';

// The decode workers' script is fixed beside src/decode; to make one fail as it loads, this file's
// tests may start another script in its place. Everything else is the real runtime.
const redirect = vi.hoisted(() => ({ url: undefined as URL | undefined }));
vi.mock('../../src/runtime/index.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/runtime/index.ts')>();
  return { ...real, startModuleWorker: (url: URL) => real.startModuleWorker(redirect.url ?? url) };
});

const tempDir = useTempDirs('tandem-typed-io-');

describe('file-system and worker errors reach callers typed (Node)', () => {
  for (const [name, body] of Object.entries(typedIoScenarios(tempDir))) test(name, body, 30_000);
});

describe("a decode pool in 'workers' mode whose workers cannot start", () => {
  const create = async (script: URL) => {
    redirect.url = script;
    try {
      return await DecodePool.create({ mode: 'workers', threads: 2 }).then(
        (pool) => pool.close().then(() => 'created'),
        (e: unknown) => e,
      );
    } finally {
      redirect.url = undefined;
    }
  };

  test('a worker script that throws as it loads: DecodeError module-unavailable, the WorkerError and the thrown error as causes', async () => {
    const dir = await tempDir();
    await writeFile(`${dir}/throws.mjs`, "throw new RangeError('decode worker script broke');\n");
    const error = await create(pathToFileURL(`${dir}/throws.mjs`));
    expect(error).toBeInstanceOf(DecodeError);
    expect(error).toBeInstanceOf(TandemError);
    expect((error as DecodeError).code).toBe('module-unavailable');
    expect((error as DecodeError).message).toContain('decode worker script broke');
    const cause = (error as DecodeError).cause;
    expect(cause).toBeInstanceOf(WorkerError);
    expect((cause as WorkerError).code).toBe('worker-crashed');
    expect((cause as WorkerError).cause).toBeInstanceOf(RangeError);
  });

  test('a worker script that is not there (moved by a bundler): DecodeError module-unavailable', async () => {
    const dir = await tempDir();
    const error = await create(pathToFileURL(`${dir}/decode-worker.js`));
    expect(error).toBeInstanceOf(DecodeError);
    expect((error as DecodeError).code).toBe('module-unavailable');
    expect((error as DecodeError).cause).toBeInstanceOf(TandemError);
  });
});
