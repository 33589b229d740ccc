// The one shape every list source becomes (sources.ts) and a Parquet source's rows take for the
// video loader (parquet.ts): in a file of its own so that neither imports the other.

/** One labelled item that reads its bytes on demand; `key` names it in failure reports. */
export interface LabelledSource {
  readonly key: string;
  readonly label: number;
  read(): Promise<Uint8Array>;
}
