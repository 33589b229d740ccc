// A text training checkpoint: the GPT's bytes (weights, AdamW moments, optimizer step) and, in the
// same file, where the text loader stands and the session's step, so a resumed run trains on
// exactly the tokens a run that never stopped would have seen next. Layout: "TTXT", the JSON
// header's length, the header (padded to 4 bytes), then GptTrainer.saveCheckpoint()'s bytes
// (vit/checkpoint.ts: the trainers' layout).
import type { TextLoaderState } from '../text/index.ts';
import { WeightsError } from '../vit/index.ts';
import { decodeFramed, encodeFramed } from '../vit/internal.ts';

const MAGIC = 0x54585454; // "TTXT" little-endian
const FORMAT = 'tandem-text-training';

export interface TextCheckpointHeader {
  format: typeof FORMAT;
  version: 1;
  /** Training steps done. */
  step: number;
  /** Training positions (labelled or not, padding excluded) consumed so far. */
  tokens: number;
  loader: TextLoaderState;
}

export interface TextCheckpoint {
  header: TextCheckpointHeader;
  /** GptTrainer.saveCheckpoint()'s bytes, for GptTrainer.loadCheckpoint(). */
  model: Uint8Array;
}

export function encodeTextCheckpoint(step: number, tokens: number, loader: TextLoaderState, model: Uint8Array): Uint8Array {
  const header: TextCheckpointHeader = { format: FORMAT, version: 1, step, tokens, loader };
  return encodeFramed(MAGIC, header, [model]);
}

/** Reads a checkpoint of `encodeTextCheckpoint`: WeightsError ('malformed', 'truncated') for anything else. */
export function decodeTextCheckpoint(bytes: Uint8Array): TextCheckpoint {
  const { header, body } = decodeFramed(bytes, MAGIC, 'text checkpoint');
  const { step, tokens, loader } = header;
  if (
    header.format !== FORMAT ||
    header.version !== 1 ||
    typeof step !== 'number' ||
    !Number.isSafeInteger(step) ||
    step < 0 ||
    typeof tokens !== 'number' ||
    typeof loader !== 'object' ||
    loader === null
  )
    throw new WeightsError('malformed', 'text checkpoint: the header lacks its format, step, tokens or loader state');
  return { header: header as unknown as TextCheckpointHeader, model: body };
}
