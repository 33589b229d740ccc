// The batch contract, one check for every batch kind Tandem hands out (src/sync/lease.ts): the
// loaders' contract runs it on their CPU batches, the target scenarios on GPU, token, tf.js,
// jax-js and ONNX batches.
import { BatchReleasedError } from '../../src/errors/index.ts';
import { check } from './assert.ts';

/**
 * What every batch kind keeps (CPU, GPU, token, tf.js, jax-js, ONNX batches alike): `read` works
 * before release(); after it, `read` and a second release() are a BatchReleasedError, and
 * `[Symbol.dispose]` (what `using` calls) does nothing more. Releases `batch`.
 */
export function checkBatchEnds<B extends { release(): void }>(kind: string, batch: B, read: (batch: B) => unknown): void {
  read(batch);
  const dispose = (batch as { [Symbol.dispose]?: () => void })[Symbol.dispose];
  check(typeof dispose === 'function', `${kind}: has [Symbol.dispose]`);
  batch.release();
  const threw = (f: () => unknown) => {
    try {
      f();
    } catch (error) {
      return error;
    }
    return undefined;
  };
  const used = threw(() => read(batch));
  check(used instanceof BatchReleasedError, `${kind}: used after release() is a BatchReleasedError (got ${String(used)})`);
  const again = threw(() => batch.release());
  check(again instanceof BatchReleasedError, `${kind}: released twice is a BatchReleasedError (got ${String(again)})`);
  check(threw(() => dispose?.call(batch)) === undefined, `${kind}: [Symbol.dispose] after release() does nothing`);
}
