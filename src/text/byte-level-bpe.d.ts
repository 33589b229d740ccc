/** The fast road for GPT-2-shaped tokenizer.json files (byte-level-bpe.js). */
export interface ByteLevelBpe {
  /** tokenizers.js's ids for `text` (no special tokens added), or undefined for a text left to it. */
  encode(text: string): Uint32Array | undefined;
}
/** The encoder for this tokenizer.json and tokenizer_config.json, or undefined for a shape it does not cover. */
export function byteLevelBpe(json: unknown, config?: Record<string, unknown>): ByteLevelBpe | undefined;
