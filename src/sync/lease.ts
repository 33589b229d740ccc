// The one batch handle: every batch Tandem hands out (CPU, GPU, token, tf.js, jax-js, ONNX) ends
// with release() through this, so each throws BatchReleasedError alike when used after release or
// released twice, and `using` ends it once.
import { BatchReleasedError } from '../errors/index.ts';

/** A batch's release and `using` end, to spread into the batch (`...lease.ends`). */
export interface BatchEnds {
  /** Gives the batch's resources back; a second call is a BatchReleasedError. */
  release(): void;
  /** `using`: release() unless the batch was released already. */
  [Symbol.dispose](): void;
}

export interface BatchLease extends BatchEnds {
  /** `value`, or a BatchReleasedError once released: wrap every read of what release() gives back. */
  guard<T>(value: T): T;
  readonly released: boolean;
  readonly ends: BatchEnds;
}

/** A lease on a batch named `what` in errors; `free` runs at the first release(). */
export function batchLease(what: string, free: () => void): BatchLease {
  let released = false;
  const ends: BatchEnds = {
    release() {
      if (released) throw new BatchReleasedError(`${what} was already released`);
      released = true;
      free();
    },
    [Symbol.dispose]() {
      if (!released) ends.release();
    },
  };
  return {
    ...ends,
    ends,
    guard(value) {
      if (released) throw new BatchReleasedError(`${what} was used after release()`);
      return value;
    },
    get released() {
      return released;
    },
  };
}

/**
 * A batch on a lease named `what`: each of `guarded` read through the lease (a BatchReleasedError
 * after release), `plain` as it is, and release() running `free` once.
 */
export function leasedBatch<G extends object, P extends object>(
  what: string,
  free: () => void,
  guarded: G,
  plain: P,
): Readonly<G> & P & BatchEnds {
  const lease = batchLease(what, free);
  const batch = { ...plain, ...lease.ends };
  for (const [name, value] of Object.entries(guarded))
    Object.defineProperty(batch, name, { get: () => lease.guard(value), enumerable: true });
  return batch as Readonly<G> & P & BatchEnds;
}
