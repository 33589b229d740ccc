import { TandemError } from '../errors/index.ts';
import type { STATUS_CODES } from './abi.ts';

/**
 * Beyond a job's own statuses: 'closed' and 'stalled' pools, 'module-unavailable' (the decode
 * module could not be loaded, or is not this library's build), 'no-shared-memory' (pthreads mode
 * without SharedArrayBuffer), 'no-threads' (the module could not start its threads). A batch used
 * after release() is a BatchReleasedError (src/errors), as on the GPU side.
 */
export type DecodeErrorCode =
  | Exclude<(typeof STATUS_CODES)[number], 'ok'>
  | 'closed'
  | 'stalled'
  | 'module-unavailable'
  | 'no-shared-memory'
  | 'no-threads';

/** A typed, per-item decode failure; the pool that raised it stays healthy. */
export class DecodeError extends TandemError {
  override readonly name = 'DecodeError';
  constructor(
    readonly code: DecodeErrorCode,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${code}: ${detail}`, options);
  }
}
