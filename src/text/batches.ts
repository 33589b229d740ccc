// Packed batches on the CPU: the packer fills the four arrays of one buffer set row by row; a full
// batch (or the input's last, partial one) is handed out with the packer's snapshot as of its last
// row. Buffer sets are reused once released, so packing allocates nothing per batch.
import type { Aggregator } from '../pipeline/index.ts';
import { leasedBatch } from '../sync/index.ts';
import { Packer, type PackerOptions, type PackerSnapshot, type RowTarget } from './pack.ts';
import type { TokenBatch } from './types.ts';

/** A document with its number in this pass's order (failed ones leave gaps). */
export interface NumberedDocument {
  index: number;
  key: string;
  tokens: Uint32Array;
}

/** A CPU batch with the position a resumed loader would continue from after it. */
export interface PackedBatch extends TokenBatch {
  readonly snapshot: PackerSnapshot;
  /** All four arrays, one after another (`4 × batchSize × seqLen` i32): what the upload ring sends. */
  readonly whole: Int32Array;
}

interface BufferSet extends RowTarget {
  whole: Int32Array<ArrayBuffer>;
}

/** Running totals of what the packer made: the padding share is padding / positions. */
export interface PackingCounts {
  batches: number;
  rows: number;
  /** Positions of rows holding tokens (rows × seqLen). */
  positions: number;
  /** Of those, positions that are padding. */
  padding: number;
  documents: number;
}

export class TokenBatchPool {
  readonly #free: BufferSet[] = [];
  readonly #size: number;
  #made = 0;

  constructor(
    readonly batchSize: number,
    readonly seqLen: number,
  ) {
    this.#size = batchSize * seqLen;
  }

  /** Buffer sets made so far (they are reused: this stays at the pipeline's depth). */
  get made(): number {
    return this.#made;
  }

  acquire(): BufferSet {
    const free = this.#free.pop();
    if (free) return free;
    this.#made++;
    const n = this.#size;
    const whole = new Int32Array(4 * n);
    return {
      whole,
      inputs: whole.subarray(0, n),
      labels: whole.subarray(n, 2 * n),
      docIds: whole.subarray(2 * n, 3 * n),
      positions: whole.subarray(3 * n),
    };
  }

  give(set: BufferSet): void {
    this.#free.push(set);
  }

  handle(set: BufferSet, count: number, padding: number, keys: string[], snapshot: PackerSnapshot): PackedBatch {
    const plain = { count, shape: [this.batchSize, this.seqLen] as const, padding, keys, snapshot };
    return leasedBatch('a text batch', () => this.give(set), set, plain);
  }
}

/** The pipeline's packing stage: documents in, the batches they complete out. */
export class PackingAggregator implements Aggregator<NumberedDocument, PackedBatch[]> {
  readonly #packer: Packer;
  readonly #pool: TokenBatchPool;
  readonly #counts: PackingCounts;
  readonly #pad: number;
  #set: BufferSet | undefined;
  #rows = 0;
  #padding = 0;
  #keys: string[] = [];

  constructor(options: PackerOptions, pool: TokenBatchPool, counts: PackingCounts, from?: PackerSnapshot) {
    this.#packer = new Packer(options, from);
    this.#pool = pool;
    this.#counts = counts;
    this.#pad = options.padId;
  }

  push(doc: NumberedDocument): PackedBatch[] | undefined {
    this.#packer.push(doc.index, doc.key, doc.tokens);
    this.#counts.documents++;
    let out: PackedBatch[] | undefined;
    while (this.#packer.ready()) {
      const batch = this.#row();
      if (batch) (out ??= []).push(batch);
    }
    return out;
  }

  flush(): PackedBatch[] | undefined {
    let out: PackedBatch[] | undefined;
    while (!this.#packer.empty) {
      const batch = this.#row();
      if (batch) (out ??= []).push(batch);
    }
    const last = this.#finish();
    if (last) (out ??= []).push(last);
    return out;
  }

  abandon(): void {
    if (this.#set) this.#pool.give(this.#set);
    this.#set = undefined;
  }

  /** Makes one row; returns the batch it completed, if it did. */
  #row(): PackedBatch | undefined {
    this.#set ??= this.#pool.acquire();
    const padding = this.#packer.fillRow(this.#set, this.#rows, this.#keys);
    if (padding < 0) return undefined;
    this.#rows++;
    this.#padding += padding;
    return this.#rows === this.#pool.batchSize ? this.#finish() : undefined;
  }

  #finish(): PackedBatch | undefined {
    const set = this.#set;
    if (!set || this.#rows === 0) return undefined;
    const T = this.#pool.seqLen;
    const from = this.#rows * T;
    set.inputs.fill(this.#pad, from);
    set.labels.fill(-1, from);
    set.docIds.fill(-1, from);
    set.positions.fill(0, from);
    const c = this.#counts;
    c.batches++;
    c.rows += this.#rows;
    c.positions += this.#rows * T;
    c.padding += this.#padding;
    const batch = this.#pool.handle(set, this.#rows, this.#padding, this.#keys, this.#packer.snapshot());
    this.#set = undefined;
    this.#rows = 0;
    this.#padding = 0;
    this.#keys = [];
    return batch;
  }
}
