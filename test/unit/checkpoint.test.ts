import { CellPosition } from '../../src/loader/internal.ts';
import { expect, it } from 'vitest';
import {
  checkSameRun,
  CheckpointError,
  decodeTrainingCheckpoint,
  encodeTrainingCheckpoint,
  keysHash,
  type TrainingState,
} from '../../src/train/checkpoint.ts';
import { presets } from '../../src/vit/index.ts';
import { regroupShardStates, type ShardManifest, type ShardStreamState } from '../../src/sources/index.ts';
import { shardData } from '../../src/train/index.ts';

const state: TrainingState = {
  model: { ...presets.tiny, classes: 4 },
  seed: 5,
  batchSize: 8,
  epochs: 2,
  augment: true,
  lr: 2e-3,
  settings: { weightDecay: 0.05, clipNorm: 1, warmupSteps: 1, augmentation: { scale: [0.6, 1], brightness: 0.1, contrast: 0.1 } },
  trainCount: 52,
  dataKey: keysHash(['a', 'b']),
  step: 7,
  seen: 56,
  position: 57,
  epochRecords: [],
};
const weights = Uint8Array.from({ length: 100 }, (_, i) => i);

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CheckpointError);
    return `${(error as CheckpointError).code}: ${(error as Error).message}`;
  }
  throw new Error('no error');
}

it('a training checkpoint round-trips its state and the trainer bytes', () => {
  const { state: back, trainerBytes } = decodeTrainingCheckpoint(encodeTrainingCheckpoint(state, weights));
  expect(back).toEqual(state);
  expect([...trainerBytes]).toEqual([...weights]);
});

it('a cut, foreign or newer checkpoint is refused with a typed error', () => {
  const bytes = encodeTrainingCheckpoint(state, weights);
  expect(codeOf(() => decodeTrainingCheckpoint(bytes.subarray(0, bytes.length - 1)))).toMatch(
    /^truncated: .*99 bytes of weights, expected 100/,
  );
  expect(codeOf(() => decodeTrainingCheckpoint(bytes.subarray(0, 20)))).toMatch(/^truncated: .*header is cut off/);
  expect(codeOf(() => decodeTrainingCheckpoint(bytes.subarray(0, 5)))).toMatch(/^truncated/);
  expect(codeOf(() => decodeTrainingCheckpoint(new TextEncoder().encode('TVIT and then some bytes')))).toMatch(/^malformed/);
  const newer = new TextDecoder('latin1').decode(bytes).replace('"version":1', '"version":9');
  expect(codeOf(() => decodeTrainingCheckpoint(Uint8Array.from(newer, (c) => c.charCodeAt(0))))).toMatch(/^version: .*version 9/);
});

it('a checkpoint of another run names every difference', () => {
  const message = codeOf(() =>
    checkSameRun(state, { ...state, seed: 6, batchSize: 16, dataKey: keysHash(['b', 'a']), model: { ...state.model, width: 32 } }),
  );
  expect(message).toMatch(/^mismatch: /);
  for (const part of ['seed 5 → 6', 'batchSize 8 → 16', 'dataKey', 'model']) expect(message).toContain(part);
  expect(() => checkSameRun(state, { ...state })).not.toThrow();
});

it("the data position is the end of the last consumed batch's cell: failed slots at its end and items that never reached a slot included", () => {
  // Batches of 3 slots. Items a..k; e fails to read (no slot); c and h fail to decode (their
  // slots stay in their cells, and the batcher moves the cell's last row into the hole).
  const position = new CellPosition(3);
  const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k'];
  const seqs = keys.map(() => position.yielded());
  for (const [i, key] of keys.entries()) if (key !== 'e') position.reached(seqs[i] ?? -1, key);
  // Cell 1: a, b, c (c failed): the batch is a, b, and the position passes c too.
  position.consumed(['a', 'b']);
  expect(position.items).toBe(3);
  // Cell 2: d, f, g (e had no slot): the position passes e, as it is before the cell's end.
  position.consumed(['d', 'f', 'g']);
  expect(position.items).toBe(7);
  // Cell 3: h, i, j; h failed and j moved into its slot: rows j, i.
  position.consumed(['j', 'i']);
  expect(position.items).toBe(10);
  expect(position.slots).toBe(0);
  // The furthest-row rule would stop at 2 after the first batch, and a resumed pass would try c again.
  expect(() => position.consumed(['z'])).toThrow(/not a run of the slots/);
});

it('a video of several clips: the position inside it counts its clips done', () => {
  const position = new CellPosition(2);
  const v0 = position.yielded();
  const v1 = position.yielded();
  position.reached(v0, ['v0#0', 'v0#1', 'v0#2']);
  position.reached(v1, ['v1#0']);
  position.consumed(['v0#0', 'v0#1']);
  expect([position.items, position.slots]).toEqual([0, 2]);
  position.consumed(['v0#2', 'v1#0']);
  expect([position.items, position.slots]).toEqual([2, 0]);
});

it('a streamed position of another rank, seed or shard list is refused, naming the difference; a regrouped one is accepted', () => {
  const manifest: ShardManifest = {
    format: 'webdataset',
    classes: ['a'],
    samples: 40,
    shards: Array.from({ length: 4 }, (_, i) => ({ name: `s${i}.tar`, samples: 10, bytes: 1 })),
  };
  const saved = shardData(manifest, '/data', { rank: 0, worldSize: 2 }).stream!.open(7, 1).stateAfter(0) as ShardStreamState;
  const reopen = (rank: number, worldSize: number, seed: number, from: unknown, m = manifest) =>
    shardData(m, '/data', { rank, worldSize }).stream!.open(seed, 1, from);
  const refused = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      return error instanceof CheckpointError ? `${error.code}: ${error.message}` : String(error);
    }
    return 'accepted';
  };
  expect(refused(() => reopen(0, 2, 7, saved))).toBe('accepted');
  expect(refused(() => reopen(0, 3, 7, saved))).toMatch(/^mismatch: .*consumer 0 of 2 → 0 of 3 .*regroupShardStates/);
  expect(refused(() => reopen(0, 2, 8, saved))).toMatch(/^mismatch: .*seed 7 → 8/);
  expect(refused(() => reopen(0, 2, 7, saved, { ...manifest, shards: manifest.shards.slice(1) }))).toMatch(/^mismatch: .*shards 4 → 3/);
  expect(refused(() => reopen(0, 2, 7, { position: 3 }))).toMatch(/^malformed: /);
  const other = shardData(manifest, '/data', { rank: 1, worldSize: 2 }).stream!.open(7, 1).stateAfter(0) as ShardStreamState;
  const regrouped = regroupShardStates([saved, other], 3);
  expect(refused(() => reopen(2, 3, 7, regrouped[2]))).toBe('accepted');
});
