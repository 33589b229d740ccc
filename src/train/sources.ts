// What a training session reads: labelled byte sources. Where the bytes come from (a file in Node
// or Deno, a File picked in the browser, an image generated in memory) is the caller's business;
// the session only calls `read()`, so it never touches a file system.
import { holdOut } from '../sources/index.ts';
import { encodeJpeg, renderSample, SHAPE_NAMES } from '../synthetic/index.ts';

/** One labelled training item that reads its bytes on demand: the loader's own item (not the decode room's ByteSource, which serves byte ranges of one file). */
export type { LabelledSource } from '../loader/index.ts';
import type { LabelledSource } from '../loader/index.ts';

export interface LabelledData {
  /** Training sources; shuffled per epoch by the session (unless `stream` is given). */
  readonly train: readonly LabelledSource[];
  /**
   * Training data as a stream instead (tar shards, local or remote): `count` samples per epoch, in
   * the order and partition the stream decides; the session never holds the list.
   */
  readonly stream?: TrainStream;
  /** Held out from training; evaluated at the end of every epoch (may be empty). */
  readonly held: readonly LabelledSource[];
  /** Class names; `label` indexes this list. */
  readonly classes: readonly string[];
}

export interface TrainStream {
  /** Samples per epoch for this process (its rank's share). */
  readonly count: number;
  /** Names the data (for example a hash of the shard list), so a checkpoint of other data is refused. */
  readonly dataKey?: string;
  /**
   * All epochs' samples, in order; a lost sample is a source whose read() rejects with why.
   * `from` is a position `stateAfter` gave (plain JSON, kept in training checkpoints): the stream
   * continues after it, or throws a typed error when it belongs to other data or another rank.
   */
  open(seed: number, epochs: number, from?: unknown): PositionedStream;
}

/** A training stream that can say where it is, after any number of the samples it yielded. */
export interface PositionedStream extends AsyncIterable<StreamSource> {
  /** The position after this stream's first `count` samples (JSON): the checkpoint of a loop that consumed that many. */
  stateAfter(count: number): unknown;
}

export interface StreamSource extends LabelledSource {
  /** The epoch this sample belongs to. */
  readonly epoch: number;
}

/** Splits every `every`-th source off as held-out data (deterministic, by position). */
export function splitHeldOut(sources: readonly LabelledSource[], classes: readonly string[], every = 5): LabelledData {
  const { train, held } = holdOut(sources, every);
  return { train, held, classes };
}

/** Sources over bytes already in memory (a picked folder read up front, generated images). */
export function memorySource(key: string, label: number, bytes: Uint8Array): LabelledSource {
  return { key, label, read: () => Promise.resolve(bytes) };
}

/** Anything with `arrayBuffer()` (a browser File or Blob), read when the loader asks for it. */
export function blobSource(key: string, label: number, blob: { arrayBuffer(): Promise<ArrayBuffer> }): LabelledSource {
  return { key, label, read: async () => new Uint8Array(await blob.arrayBuffer()) };
}

export interface SyntheticDataOptions {
  count: number;
  seed?: number;
  classes?: number;
  /** Generated image size; small images keep generation cheap where it runs on a UI thread. */
  width?: number;
  height?: number;
  quality?: number;
  heldOutEvery?: number;
  onProgress?: (done: number, total: number) => void;
}

/**
 * The project's synthetic labelled dataset (src/synthetic), encoded as JPEGs in memory.
 * Yields to the event loop every few images so a page that generates it stays responsive.
 */
export async function syntheticData(o: SyntheticDataOptions): Promise<LabelledData> {
  const { count, seed = 0, classes = 4, width = 160, height = 120, quality = 90 } = o;
  const sources: LabelledSource[] = [];
  for (let i = 0; i < count; i++) {
    const sample = renderSample(seed, i, { width, height, classes });
    sources.push(memorySource(`synthetic/${sample.className}/${i}`, sample.label, encodeJpeg(sample.rgb, width, height, { quality })));
    if (i % 16 === 15) {
      o.onProgress?.(i + 1, count);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }
  o.onProgress?.(count, count);
  return splitHeldOut(sources, SHAPE_NAMES.slice(0, classes), o.heldOutEvery ?? 5);
}
