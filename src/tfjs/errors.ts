import { TandemError } from '../errors/index.ts';

export type TfjsErrorCode = 'batch-released' | 'shape-mismatch' | 'no-webgpu-backend' | 'closed';

/** A batch that cannot become TensorFlow.js tensors: released already, the wrong shape, a closed feeder. */
export class TfjsError extends TandemError {
  override readonly name = 'TfjsError';
  constructor(
    readonly code: TfjsErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
