// The file system's errors as Tandem's: Node says ENOENT, Deno says NotFound (and, from Deno 2, also
// ENOENT in `code`); a caller branches on one code whichever runtime read the file.
import { CodedError, TandemError } from './base.ts';

/**
 * Why a local file or folder could not be used: `not-found`, `permission-denied`, `is-a-directory`
 * (a folder where a file was expected), `not-a-directory` (a file where a folder was expected),
 * `already-exists`, or `io-error` for the rest (a full disk, an I/O fault): the system's own error
 * is the `cause`.
 */
export type FileErrorCode = 'not-found' | 'permission-denied' | 'is-a-directory' | 'not-a-directory' | 'already-exists' | 'io-error';

/** What Tandem was doing with the path. */
export type FileOperation = 'read' | 'write' | 'list' | 'make-dir' | 'open';

export class FileError extends CodedError<FileErrorCode> {
  override readonly name = 'FileError';
  constructor(
    code: FileErrorCode,
    readonly path: string,
    readonly operation: FileOperation,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

const BY_SYSTEM_CODE = new Map<string, FileErrorCode>(
  Object.entries({
    ENOENT: 'not-found',
    EACCES: 'permission-denied',
    EPERM: 'permission-denied',
    EISDIR: 'is-a-directory',
    ENOTDIR: 'not-a-directory',
    EEXIST: 'already-exists',
  }) as Array<[string, FileErrorCode]>,
);

// Deno's error classes (Deno.errors.*); NotCapable is a permission the process was not granted.
const BY_DENO_NAME = new Map<string, FileErrorCode>(
  Object.entries({
    NotFound: 'not-found',
    PermissionDenied: 'permission-denied',
    NotCapable: 'permission-denied',
    IsADirectory: 'is-a-directory',
    NotADirectory: 'not-a-directory',
    AlreadyExists: 'already-exists',
  }) as Array<[string, FileErrorCode]>,
);

const VERB: Record<FileOperation, string> = { read: 'read', write: 'write', list: 'list', 'make-dir': 'make the folder', open: 'open' };

/**
 * `error` from the file system as a FileError naming the path and the operation, the original as
 * its `cause`. A TandemError passes unchanged: it already says what went wrong.
 */
export function asFileError(error: unknown, operation: FileOperation, path: string): Error {
  if (error instanceof TandemError) return error;
  const fields = (error ?? {}) as { code?: unknown; name?: unknown; message?: unknown };
  const system = typeof fields.code === 'string' ? BY_SYSTEM_CODE.get(fields.code) : undefined;
  const deno = typeof fields.name === 'string' ? BY_DENO_NAME.get(fields.name) : undefined;
  const code = system ?? deno ?? 'io-error';
  const detail = typeof fields.message === 'string' ? fields.message : String(error);
  return new FileError(code, path, operation, `tandem: cannot ${VERB[operation]} ${path}: ${code} (${detail})`, { cause: error });
}
