// Why a video's clips could not be drawn: per video, so a loader reports the item and goes on.
import { CodedError } from '../errors/index.ts';

/**
 * `empty-timeline`: the video has no frames; `video-too-short`: it is shorter than one clip and the
 * policy is `'error'`; `bad-timeline`: a frame time that is not finite, times out of order, or a
 * duration that is neither NaN nor a finite number ≥ 0; `too-many-clips`: `{ kind: 'all' }` over
 * this video would make more than MAX_CLIP_SLOTS slots (a smaller hop or a longer video than the
 * caller meant).
 */
export type ClipSamplingErrorCode = 'empty-timeline' | 'video-too-short' | 'bad-timeline' | 'too-many-clips';

export class ClipSamplingError extends CodedError<ClipSamplingErrorCode> {
  override readonly name = 'ClipSamplingError';
}
