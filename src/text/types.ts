// The shapes every part of the text loader agrees on: a document's tokens, the packed batch on the
// CPU, on the GPU and as tf.js tensors, and what a tokenizer stage must give. Kept apart so the
// packer, the tokenizer stage, the GPU ring and the framework doors depend only on these; the
// four arrays' shape is the jax door's TokenArrays, which reads them.
import type { TokenArrays } from '../jax/index.ts';

/** One document's token ids, in order, as the packer takes them (BOS/EOS already added). */
export interface TokenDocument {
  /** Stable name for failures and order: `shard#n`, a path, or a key the source gave. */
  key: string;
  tokens: Uint32Array;
}

/**
 * A packed batch whose arrays are `T`s, every one full size (`batchSize` rows), row-major; rows
 * past `count` are padding. For position t of a row: `inputs[t]` is the token, `labels[t]` the
 * next token (−1 where it is padding or past `count`), `docIds[t]` the document's number within
 * the row (0, 1, …; −1 for padding), `positions[t]` the position within that document's piece (0
 * at its first token in this row). `count` rows hold tokens (the last batch of a pass may have
 * fewer than `batchSize`); `keys` are the documents that began in this batch, in order.
 */
export interface PackedArrays<T> extends TokenArrays<T> {
  /** Positions of `count` rows that hold padding (their label is −1). */
  readonly padding: number;
  [Symbol.dispose](): void;
}

/** A packed batch on the CPU. */
export interface TokenBatch extends PackedArrays<Int32Array> {}

/**
 * The same batch in GPU buffers on the loader's device, each `i32 × batchSize × seqLen`, STORAGE |
 * COPY_DST | COPY_SRC. Valid until `release()`; release once the work that reads them is submitted.
 */
export interface TokenDeviceBatch extends PackedArrays<GPUBuffer> {}

/** A batch as tf.js tensors (`[batchSize, seqLen]`, int32); `release()` disposes all four. */
export interface TokenTensors extends PackedArrays<unknown> {}

/** A tokenizer the loader can call directly: text in, ids out (no special tokens added). */
export interface TokenEncoder {
  encode(text: string): ArrayLike<number>;
}
