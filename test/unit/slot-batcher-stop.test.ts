// SlotBatcher across a stop: a batch buffer handed to a waiting item just before its pipeline
// stopped arrives after the stop; it must go back rather than open a batch that the next pass's
// first item joins beside the stale one (seen in Chromium as a batch of one clip from the stopped
// pass and one from the next, which the loader's position refused).
import { expect, it } from 'vitest';
import { type FinishedBuffer, SlotBatcher, type SlotStorage } from '../../src/decode/internal.ts';

const storage: SlotStorage = { allocate: () => 0, free: () => {}, move: () => {} };

class KeysBatcher extends SlotBatcher<{ key: string }, { keys: string[]; release(): void }> {
  constructor() {
    super(storage, 1, 2, 2, 0);
  }
  protected async fill(): Promise<void> {}
  protected describe(f: FinishedBuffer): { keys: string[]; release(): void } {
    return { keys: f.buffer.keys.slice(0, f.count), release: () => f.release() };
  }
}

/** Runs one item through the decode stage and the aggregator; the batch it completes, if any. */
async function push(b: KeysBatcher, agg: ReturnType<KeysBatcher['aggregator']>, key: string, signal?: AbortSignal) {
  let batch: { keys: string[]; release(): void } | undefined;
  for await (const token of b.decodeStage({ key }, { signal })) batch = agg.push(token) ?? batch;
  return batch;
}

it('a buffer that reaches a stopped pass goes back, and the next pass starts a batch of its own', async () => {
  const b = new KeysBatcher();
  const old = new AbortController();
  const oldAgg = b.aggregator();
  // Both buffers handed out as batches: the next item waits in line for one.
  const held = [await push(b, oldAgg, 'a', old.signal), await push(b, oldAgg, 'b', old.signal)];
  const second = [await push(b, oldAgg, 'c', old.signal), await push(b, oldAgg, 'd', old.signal)];
  expect(held[1]?.keys).toEqual(['a', 'b']);
  expect(second[1]?.keys).toEqual(['c', 'd']);
  const waiting = push(b, oldAgg, 'stale', old.signal).catch((e: unknown) => e);
  await new Promise((r) => setTimeout(r, 0));
  // The consumer gives a batch back (the waiter is handed its buffer), then stops the pass.
  held[1]?.release();
  old.abort(new DOMException('pipeline stopped', 'AbortError'));
  oldAgg.abandon();
  expect(await waiting).toBeInstanceOf(DOMException);
  // The next pass: its first two items make a batch of their own.
  const agg = b.aggregator();
  await push(b, agg, 'x');
  const next = await push(b, agg, 'y');
  expect(next?.keys).toEqual(['x', 'y']);
  expect(b.stats()).toMatchObject({ buffers: 2, handed: 2 });
});
