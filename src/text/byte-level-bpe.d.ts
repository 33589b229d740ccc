/** The fast road for byte-level BPE tokenizer.json files (byte-level-bpe.js). */
export interface ByteLevelBpe {
  /** tokenizers.js's ids for `text` (no special tokens added), or undefined for a text left to it. */
  encode(text: string): Uint32Array | undefined;
}
/**
 * The encoder for this tokenizer.json and tokenizer_config.json, or undefined for a shape it does not cover;
 * `splitPattern` is the RegExp tokenizers.js compiled for a Split + ByteLevel pre-tokenizer.
 */
export function byteLevelBpe(json: unknown, config?: Record<string, unknown>, splitPattern?: RegExp): ByteLevelBpe | undefined;
/** The RegExp a tokenizers.js instance compiled for its Split pre-tokenizer, or undefined. */
export function librarySplitPattern(tokenizer: unknown): RegExp | undefined;
