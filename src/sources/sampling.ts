import { streamFor } from '../random/index.ts';

/**
 * A seeded permutation of `items` for one epoch: different every epoch, identical for the same
 * seed and epoch (Fisher–Yates over a per-epoch stream).
 */
export function shuffledEpoch<T>(items: readonly T[], seed: number, epoch: number): T[] {
  const out = items.slice();
  const rng = streamFor(seed, epoch, 0x5eed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = out[i]!;
    out[i] = out[j]!;
    out[j] = t;
  }
  return out;
}

/** `epochs` seeded shuffles of `items`, one after the other, as one stream. */
export function* shuffledEpochs<T>(items: readonly T[], seed: number, epochs: number): Generator<T> {
  for (let e = 0; e < epochs; e++) yield* shuffledEpoch(items, seed, e);
}

/** Splits off every `every`-th item (by position) as a held-out set; deterministic. */
export function holdOut<T>(items: readonly T[], every: number): { train: T[]; held: T[] } {
  const train: T[] = [];
  const held: T[] = [];
  items.forEach((item, i) => {
    (i % every === every - 1 ? held : train).push(item);
  });
  return { train, held };
}
