// One failure model for all of Tandem. Every error it raises or reports is a TandemError whose
// `code` says what went wrong in words stable enough to branch on; every item a source or a stage
// could not deliver is a Failed: which item (key), at which step (stage), and why (error). Items
// and failures travel in the same stream, told apart with isFailure, so a loader counts a bad item
// and goes on with the next.

import { CodedError, TandemError } from './base.ts';

export { CodedError, TandemError } from './base.ts';
export { OptionChecker, OptionError } from './options.ts';
export { asFileError, FileError, type FileErrorCode, type FileOperation } from './files.ts';

/**
 * What the runtime lacks for the call: local files (a browser), WebGPU, a package Node needs, an
 * asset it could not load. Said with what to install or enable.
 */
export type EnvironmentErrorCode = 'no-local-files' | 'no-webgpu' | 'missing-package' | 'asset-unavailable';

export class EnvironmentError extends CodedError<EnvironmentErrorCode> {
  override readonly name = 'EnvironmentError';
}

/**
 * Something that is not an Error was thrown (a string, a number, an object) where Tandem reports a
 * failure: kept as `value`, so every failure's `error` is an Error with a `code`.
 */
export class ThrownValueError extends TandemError {
  override readonly name = 'ThrownValueError';
  readonly code = 'non-error-thrown';
  constructor(readonly value: unknown) {
    super(`a non-Error value was thrown: ${String(value)}`);
  }
}

/** `error` itself when it is an Error, else a ThrownValueError holding it. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new ThrownValueError(error);
}

/**
 * A worker Tandem started failed as a worker, not in a task: it crashed, exited, sent a message
 * that could not be read, or was asked for work after its pool closed.
 */
export type WorkerErrorCode = 'worker-crashed' | 'worker-exited' | 'bad-message' | 'pool-closed';

export class WorkerError extends CodedError<WorkerErrorCode> {
  override readonly name = 'WorkerError';
}

/** A broken promise inside Tandem itself, never the caller's input: a bug to report. */
export class InternalError extends TandemError {
  override readonly name = 'InternalError';
  readonly code = 'internal';
}

/** Checks what Tandem's own code guarantees; a failure is an InternalError (a bug), not bad input. */
export function invariant(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InternalError(message);
}

/** An item that was not delivered: which one (`key`), at which step (`stage`), and why (`error`). */
export interface Failed<Stage extends string = string, E extends Error = Error> {
  readonly key: string;
  readonly stage: Stage;
  readonly error: E;
}

/** True for the failures in a stream of items and failures (sources yield both). */
export function isFailure<T extends object>(item: T): item is Extract<T, Failed<string, Error>> {
  return 'error' in item && (item as { error: unknown }).error instanceof Error && 'stage' in item;
}

/**
 * A batch was used after `release()`, or released twice: the same class and code for every batch
 * kind (CPU, GPU, token, tf.js, jax-js, ONNX), all handed out on src/sync's one lease.
 */
export class BatchReleasedError extends TandemError {
  override readonly name = 'BatchReleasedError';
  readonly code = 'batch-released';
}
