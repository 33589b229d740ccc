// Weighted mixing of several datasets or streams: each item comes from input i with probability
// weight_i / Σ weights (over the inputs still live), drawn from a counter-based seeded stream, so
// the same seed gives the same interleaving.
import { hash3 } from '../random/index.ts';

type AnyIterable<T> = Iterable<T> | AsyncIterable<T>;

export interface MixInput<T> {
  /** The items, or a function making a fresh pass over them (required for exhausted: 'cycle'). */
  source: AnyIterable<T> | (() => AnyIterable<T>);
  weight: number;
}

export interface MixOptions {
  seed?: number;
  /**
   * When an input runs out: 'stop' ends the mix (weights stay exact to the end), 'drop' goes on
   * with the others (their weights renormalised), 'cycle' starts that input again.
   */
  exhausted?: 'stop' | 'drop' | 'cycle';
  /** Stop after this many items (a 'cycle' mix is otherwise endless). */
  limit?: number;
}

export interface Mixed<T> {
  /** Index of the input the item came from. */
  input: number;
  value: T;
}

const iteratorOf = <T>(iterable: AnyIterable<T>): Iterator<T> | AsyncIterator<T> =>
  Symbol.asyncIterator in iterable ? iterable[Symbol.asyncIterator]() : iterable[Symbol.iterator]();

/** Yields `{ input, value }` items mixed from `inputs` by weight. */
export async function* mixSources<T>(inputs: readonly MixInput<T>[], options: MixOptions = {}): AsyncGenerator<Mixed<T>> {
  const { seed = 0, exhausted = 'stop', limit = Infinity } = options;
  for (const [i, input] of inputs.entries()) {
    if (!(input.weight >= 0) || !Number.isFinite(input.weight)) throw new RangeError(`input ${i}: weight ${input.weight} is not a finite non-negative number`);
    if (exhausted === 'cycle' && typeof input.source !== 'function') throw new TypeError(`input ${i}: exhausted 'cycle' needs a source function that makes a fresh pass`);
  }
  const open = (i: number) => {
    const source = inputs[i]!.source;
    return iteratorOf(typeof source === 'function' ? source() : source);
  };
  const iterators: Array<Iterator<T> | AsyncIterator<T> | undefined> = inputs.map((input, i) => (input.weight > 0 ? open(i) : undefined));
  const weights = inputs.map((input) => input.weight);
  let total = weights.reduce((a, b) => a + b, 0);
  let draws = 0;
  let emitted = 0;
  try {
    while (total > 0 && emitted < limit) {
      let r = (hash3(seed, draws++, 0x31f) / 4294967296) * total;
      let i = 0;
      while (i < weights.length - 1 && (r >= weights[i]! || weights[i] === 0)) r -= weights[i++]!;
      // Rounding can carry r past the last live input onto a dropped one: step back to a live one.
      while (weights[i] === 0 && i > 0) i--;
      const step = await iterators[i]!.next();
      if (step.done !== true) {
        emitted++;
        yield { input: i, value: step.value };
        continue;
      }
      if (exhausted === 'stop') return;
      if (exhausted === 'cycle') {
        iterators[i] = open(i);
        const first = await iterators[i]!.next();
        if (first.done !== true) {
          emitted++;
          yield { input: i, value: first.value };
          continue;
        }
        // An input that is empty even when started afresh can never contribute: drop it.
      }
      total -= weights[i]!;
      weights[i] = 0;
      iterators[i] = undefined;
    }
  } finally {
    // Leaving early (break, stop) closes the inputs still open, e.g. shard streams holding a fetch.
    await Promise.all(iterators.map((it) => it?.return?.()));
  }
}
