// The one shape every list source becomes (sources.ts) and a Parquet source's rows take for the
// video loader (parquet.ts): in a file of its own so that neither imports the other.

import type { ByteSource } from '../decode/index.ts';

/** One labelled item that reads its bytes on demand; `key` names it in failure reports. */
export interface LabelledSource {
  readonly key: string;
  readonly label: number;
  read(): Promise<Uint8Array>;
  /**
   * Ranged reads of the same bytes, where the item allows them (a local file, a Blob, bytes in
   * memory, an http(s) URL whose server takes ranges); undefined where it does not, and the
   * caller reads the item whole. The caller closes what it gets.
   */
  open?(): Promise<RangedSource | undefined>;
}

/** A ByteSource with a known size, closed once its reads are done. */
export interface RangedSource extends ByteSource {
  readonly size: number;
  /** Each read is a network round trip (an http(s) URL): callers read it in large windows, not many small reads. */
  readonly remote?: boolean;
  close(): Promise<void>;
}
