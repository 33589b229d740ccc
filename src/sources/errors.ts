import { CodedError } from '../errors/index.ts';

/**
 * A dataset or its saved position that cannot be used as asked: a folder without class folders,
 * no Cache API, a state of another kind or for other inputs, a position asked for too late, a
 * stream iterated twice. Per-sample
 * problems are SourceError; network ones FetchError.
 */
export type DatasetErrorCode =
  | 'no-classes'
  | 'no-cache-api'
  | 'not-a-state'
  | 'state-mismatch'
  | 'position-unavailable'
  | 'cache-collision'
  | 'iterated';

export class DatasetError extends CodedError<DatasetErrorCode> {
  override readonly name = 'DatasetError';
}
