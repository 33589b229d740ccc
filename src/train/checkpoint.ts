// A training checkpoint: everything a session needs to continue exactly where it was, in one byte
// array. The model, the AdamW moments and the schedule's step (ViTTrainer.saveCheckpoint's bytes),
// the data position (source items consumed by the steps taken, in the seeded order every run of
// the same seed follows) and the epochs already recorded, behind a versioned JSON header. A resumed
// session checks that it is the same run (model, data, seed, batch size, epochs) and says what
// differs when it is not.
import { InternalError, CodedError } from '../errors/index.ts';
import type { ViTConfig } from '../vit/index.ts';
import type { EpochRecord } from './events.ts';

export type CheckpointErrorCode = 'malformed' | 'truncated' | 'version' | 'mismatch';

/** A training checkpoint that cannot be resumed from: broken, from another version, or another run. */
export class CheckpointError extends CodedError<CheckpointErrorCode> {
  override readonly name = 'CheckpointError';
}

/** What must be equal for a checkpoint to continue a run. */
export interface RunIdentity {
  model: ViTConfig;
  seed: number;
  batchSize: number;
  epochs: number;
  augment: boolean;
  lr: number;
  /** Weight decay, clipping, warm-up and augmentation ranges as resolved. */
  settings: { weightDecay: number; clipNorm: number; warmupSteps: number; augmentation: unknown };
  /** Training items per epoch, and a hash of their keys in order. */
  trainCount: number;
  dataKey: string;
}

export interface TrainingState extends RunIdentity {
  /** Optimizer steps taken. */
  step: number;
  /** Training images those steps consumed. */
  seen: number;
  /** Source items consumed (images trained on, and items that failed, before the last one trained). */
  position: number;
  /** For streamed data: the stream's own position after those items (`PositionedStream.stateAfter`), plain JSON. */
  stream?: unknown;
  epochRecords: EpochRecord[];
}

const MAGIC = 'TNDMTRN1';
const FORMAT = 'tandem-training';
const VERSION = 1;

export function encodeTrainingCheckpoint(state: TrainingState, trainerBytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const header = new TextEncoder().encode(
    JSON.stringify({ format: FORMAT, version: VERSION, ...state, trainerBytes: trainerBytes.length }),
  );
  const out = new Uint8Array(MAGIC.length + 4 + header.length + trainerBytes.length);
  out.set(new TextEncoder().encode(MAGIC), 0);
  new DataView(out.buffer).setUint32(MAGIC.length, header.length, true);
  out.set(header, MAGIC.length + 4);
  out.set(trainerBytes, MAGIC.length + 4 + header.length);
  return out;
}

export function decodeTrainingCheckpoint(bytes: Uint8Array): { state: TrainingState; trainerBytes: Uint8Array } {
  const start = MAGIC.length + 4;
  if (bytes.length < start) throw new CheckpointError('truncated', `training checkpoint: ${bytes.length} bytes, shorter than its header`);
  if (new TextDecoder().decode(bytes.subarray(0, MAGIC.length)) !== MAGIC)
    throw new CheckpointError('malformed', 'not a Tandem training checkpoint');
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(MAGIC.length, true);
  if (start + headerLength > bytes.length) throw new CheckpointError('truncated', 'training checkpoint: the header is cut off');
  let header: TrainingState & { format?: unknown; version?: unknown; trainerBytes?: unknown };
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(start, start + headerLength)));
  } catch (error) {
    throw new CheckpointError(
      'malformed',
      `training checkpoint: the header is not JSON (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (header.format !== FORMAT) throw new CheckpointError('malformed', 'not a Tandem training checkpoint');
  if (header.version !== VERSION)
    throw new CheckpointError('version', `training checkpoint version ${String(header.version)}; this Tandem reads version ${VERSION}`);
  const trainerLength = header.trainerBytes;
  if (typeof trainerLength !== 'number' || start + headerLength + trainerLength !== bytes.length)
    throw new CheckpointError(
      'truncated',
      `training checkpoint: ${bytes.length - start - headerLength} bytes of weights, expected ${String(trainerLength)}`,
    );
  const { format: _format, version: _version, trainerBytes: _trainer, ...state } = header;
  return { state, trainerBytes: bytes.subarray(start + headerLength) };
}

/** Throws a `mismatch` CheckpointError naming every field in which `saved` is not the run `current` is. */
export function checkSameRun(saved: RunIdentity, current: RunIdentity): void {
  const differences: string[] = [];
  const fields = ['seed', 'batchSize', 'epochs', 'augment', 'lr', 'trainCount', 'dataKey', 'model', 'settings'] as const;
  for (const field of fields) {
    const [was, now] = [JSON.stringify(saved[field]), JSON.stringify(current[field])];
    if (was !== now) differences.push(`${field} ${was} → ${now}`);
  }
  if (differences.length)
    throw new CheckpointError('mismatch', `the checkpoint is from another run (checkpoint → this run): ${differences.join('; ')}`);
}

/** A short hash (FNV-1a, 32-bit, hex) of the training keys in order: the same data, in the same order. */
export function keysHash(keys: Iterable<string>): string {
  let h = 0x811c9dc5;
  for (const key of keys) {
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ 0x0a, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}
