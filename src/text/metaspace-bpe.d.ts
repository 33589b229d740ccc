/** The fast road for SentencePiece-style BPE tokenizer.json files (metaspace-bpe.js). */
export interface MetaspaceBpe {
  /** tokenizers.js's ids for `text` (no special tokens added), or undefined for a text left to it. */
  encode(text: string): Uint32Array | undefined;
}
/** The encoder for this tokenizer.json and tokenizer_config.json, or undefined for a shape it does not cover. */
export function metaspaceBpe(json: unknown, config?: Record<string, unknown>): MetaspaceBpe | undefined;
