import { TandemError } from '../errors/index.ts';
import type { STATUS_CODES } from './abi.ts';

/** 'module-unavailable': the decode module could not be loaded from DecodePoolOptions.moduleBase. */
export type DecodeErrorCode = Exclude<(typeof STATUS_CODES)[number], 'ok'> | 'closed' | 'stalled' | 'module-unavailable';

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
