// The shapes every part of the text loader agrees on: a document's tokens, the packed batch on the
// CPU and on the GPU, and what a tokenizer stage must give. Kept apart so the packer, the
// tokenizer stage, the GPU ring and the framework doors depend only on these.

/** One document's token ids, in order, as the packer takes them (BOS/EOS already added). */
export interface TokenDocument {
  /** Stable name for failures and order: `shard#n`, a path, or a key the source gave. */
  key: string;
  tokens: Uint32Array;
}

/**
 * A packed batch of `rows` × `seqLen` positions on the CPU. Every array is full size (`batchSize`
 * rows), row-major; rows past `count` are padding. For position t of a row: `inputs[t]` is the
 * token, `labels[t]` the next token (−1 where it is padding or past `count`), `docIds[t]` the
 * document's number within the row (0, 1, …; −1 for padding), `positions[t]` the position within
 * that document's piece (0 at its first token in this row).
 */
export interface TokenBatch {
  readonly inputs: Int32Array;
  readonly labels: Int32Array;
  readonly docIds: Int32Array;
  readonly positions: Int32Array;
  /** Rows holding tokens (the last batch of a pass may have fewer than `batchSize`). */
  readonly count: number;
  /** `[batchSize, seqLen]`. */
  readonly shape: readonly [number, number];
  /** Positions of `count` rows that hold padding (their label is −1). */
  readonly padding: number;
  /** Keys of the documents that began in this batch, in order. */
  readonly keys: readonly string[];
  release(): void;
}

/**
 * The same batch in GPU buffers on the loader's device, each `i32 × batchSize × seqLen`, STORAGE |
 * COPY_DST | COPY_SRC. Valid until `release()`; release once the work that reads them is submitted.
 */
export interface TokenDeviceBatch {
  readonly inputs: GPUBuffer;
  readonly labels: GPUBuffer;
  readonly docIds: GPUBuffer;
  readonly positions: GPUBuffer;
  readonly count: number;
  readonly shape: readonly [number, number];
  readonly padding: number;
  readonly keys: readonly string[];
  release(): void;
}

/** A tokenizer the loader can call directly: text in, ids out (no special tokens added). */
export interface TokenEncoder {
  encode(text: string): ArrayLike<number>;
}
