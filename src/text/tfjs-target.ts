// `to: tf`: a packed batch as four int32 tensors. A token batch is small (8 × 256 × 4 bytes per
// array by default), so the tensors are made from the CPU arrays on any backend; tf.js uploads
// them when a kernel first reads them. The CPU batch goes back to its pool at once.
import type { PackedBatch } from './batches.ts';
import type { PackerSnapshot } from './pack.ts';
import type { TfjsTokens } from './options.ts';

/** A batch as tf.js tensors (`[batchSize, seqLen]`, int32); `release()` disposes all four. */
export interface TokenTensors {
  readonly inputs: unknown;
  readonly labels: unknown;
  readonly docIds: unknown;
  readonly positions: unknown;
  readonly count: number;
  readonly shape: readonly [number, number];
  readonly padding: number;
  readonly keys: readonly string[];
  release(): void;
}

interface Disposable {
  dispose(): void;
}

export function tfjsTokens(tf: TfjsTokens, batch: PackedBatch): TokenTensors & { snapshot: PackerSnapshot } {
  const shape = [batch.shape[0], batch.shape[1]];
  try {
    const make = (a: Int32Array) => tf.tensor(a.slice(), shape, 'int32') as Disposable;
    const inputs = make(batch.inputs);
    const labels = make(batch.labels);
    const docIds = make(batch.docIds);
    const positions = make(batch.positions);
    let released = false;
    return {
      inputs,
      labels,
      docIds,
      positions,
      count: batch.count,
      shape: batch.shape,
      padding: batch.padding,
      keys: batch.keys,
      snapshot: batch.snapshot,
      release() {
        if (released) return;
        released = true;
        for (const t of [inputs, labels, docIds, positions]) t.dispose();
      },
    };
  } finally {
    batch.release();
  }
}
