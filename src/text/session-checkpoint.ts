// A text training checkpoint: the GPT's bytes (weights, AdamW moments, optimizer step) and, in the
// same file, where the text loader stands and the session's step, so a resumed run trains on
// exactly the tokens a run that never stopped would have seen next. Layout: "TTXT", the JSON
// header's length, the header (padded to 4 bytes), then GptTrainer.checkpoint()'s bytes.
import { WeightsError } from '../vit/index.ts';
import type { TextLoaderState } from './state.ts';

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
  /** GptTrainer.checkpoint()'s bytes, for GptTrainer.restore(). */
  model: Uint8Array;
}

export function encodeTextCheckpoint(step: number, tokens: number, loader: TextLoaderState, model: Uint8Array): Uint8Array {
  const header: TextCheckpointHeader = { format: FORMAT, version: 1, step, tokens, loader };
  const json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 4) * 4;
  const out = new Uint8Array(8 + padded + model.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, json.length, true);
  out.set(json, 8);
  out.set(model, 8 + padded);
  return out;
}

/** Reads a checkpoint of `encodeTextCheckpoint`: WeightsError ('malformed', 'truncated') for anything else. */
export function decodeTextCheckpoint(bytes: Uint8Array): TextCheckpoint {
  if (!(bytes instanceof Uint8Array) || bytes.length < 8) throw new WeightsError('truncated', 'text checkpoint: shorter than its header');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) throw new WeightsError('malformed', 'text checkpoint: not a Tandem text training checkpoint');
  const length = view.getUint32(4, true);
  const padded = Math.ceil(length / 4) * 4;
  if (8 + padded > bytes.length) throw new WeightsError('truncated', 'text checkpoint: the header is cut short');
  let header: Partial<TextCheckpointHeader>;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + length)));
  } catch {
    throw new WeightsError('malformed', 'text checkpoint: the header is not JSON');
  }
  const step = header.step;
  if (
    header.format !== FORMAT ||
    header.version !== 1 ||
    typeof step !== 'number' ||
    !Number.isSafeInteger(step) ||
    step < 0 ||
    typeof header.tokens !== 'number' ||
    typeof header.loader !== 'object' ||
    header.loader === null
  )
    throw new WeightsError('malformed', 'text checkpoint: the header lacks its format, step, tokens or loader state');
  return { header: header as TextCheckpointHeader, model: bytes.subarray(8 + padded) };
}
