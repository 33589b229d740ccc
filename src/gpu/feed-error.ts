// Its own file so that the uploader (which feeders build on) can raise it without an import cycle.
import { CodedError } from '../errors/index.ts';

export type FeedErrorCode = 'shape-mismatch' | 'closed' | 'no-webgpu-backend';

/** A batch a framework feeder cannot take: the wrong shape, a closed feeder, no backend (a released one is a BatchReleasedError). */
export class FeedError extends CodedError<FeedErrorCode> {
  override readonly name = 'FeedError';
}
