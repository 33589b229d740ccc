import { TandemError } from '../errors/index.ts';
import type { STATUS_CODES } from './abi.ts';

export type DecodeErrorCode = Exclude<(typeof STATUS_CODES)[number], 'ok'> | 'closed' | 'stalled';

/** A typed, per-item decode failure; the pool that raised it stays healthy. */
export class DecodeError extends TandemError {
  override readonly name = 'DecodeError';
  constructor(
    readonly code: DecodeErrorCode,
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}
