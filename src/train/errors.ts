import { TandemError } from '../errors/index.ts';

/** A training session that cannot start: no training images, or a shards.json it cannot read. */
export class TrainingError extends TandemError {
  override readonly name = 'TrainingError';
  constructor(
    readonly code: 'no-data' | 'bad-manifest',
    message: string,
  ) {
    super(message);
  }
}
