// Weighted mixing of several datasets or streams: each item comes from input i with probability
// weight_i / Σ weights (over the inputs still live), drawn from a counter-based seeded stream, so
// the same seed gives the same interleaving, and a saved position (draws, items taken per input)
// continues it exactly.
import { DatasetError } from './errors.ts';
import { hash3 } from '../random/index.ts';

type AnyIterable<T> = Iterable<T> | AsyncIterable<T>;

/** Where a fresh pass over an input should start: pass number, and items of it already taken. */
export interface MixPosition {
  pass: number;
  skip: number;
}

export interface MixInput<T> {
  /**
   * The items, or a function making a fresh pass over them (needed for exhausted: 'cycle' and for
   * resuming). With `seekable`, the function itself starts at `position.skip`; otherwise the mix
   * reads and discards that many items.
   */
  source: AnyIterable<T> | ((position: MixPosition) => AnyIterable<T>);
  weight: number;
  seekable?: boolean;
}

export interface MixOptions {
  seed?: number;
  /**
   * When an input runs out: 'stop' ends the mix (weights stay exact to the end), 'drop' goes on
   * with the others (their weights renormalised), 'cycle' starts that input again.
   */
  exhausted?: 'stop' | 'drop' | 'cycle';
  /** Stop after this many items in all (a 'cycle' mix is otherwise endless). */
  limit?: number;
  /** How many items behind the newest `stateAt` can go (default 16384). */
  stateLag?: number;
}

export interface Mixed<T> {
  /** Index of the input the item came from. */
  input: number;
  value: T;
  /** Position in the mix: `stateAt(item.index + 1)` continues after it. */
  index: number;
}

export interface MixState {
  kind: 'tandem.mix';
  version: 1;
  seed: number;
  draws: number;
  emitted: number;
  /** Per input: items taken in its current pass, passes started before it, and whether it was dropped. */
  taken: number[];
  passes: number[];
  dropped: boolean[];
}

const iteratorOf = <T>(iterable: AnyIterable<T>): Iterator<T> | AsyncIterator<T> =>
  Symbol.asyncIterator in iterable ? iterable[Symbol.asyncIterator]() : iterable[Symbol.iterator]();

// What one draw did, logged as [input, outcome] so any recent state can be rebuilt.
const EMITTED = 0;
const DROPPED = 1;
const CYCLED = 2;

export class WeightedMix<T> implements AsyncIterable<Mixed<T>> {
  private readonly seed: number;
  private readonly exhausted: 'stop' | 'drop' | 'cycle';
  private readonly limit: number;
  private readonly keep: number;
  private current: MixState;
  private base: MixState;
  private log: number[] = [];

  constructor(
    private readonly inputs: readonly MixInput<T>[],
    options: MixOptions = {},
  ) {
    this.seed = options.seed ?? 0;
    this.exhausted = options.exhausted ?? 'stop';
    this.limit = options.limit ?? Infinity;
    this.keep = options.stateLag ?? 16_384;
    for (const [i, input] of inputs.entries()) {
      if (!(input.weight >= 0) || !Number.isFinite(input.weight))
        throw new RangeError(`input ${i}: weight ${input.weight} is not a finite non-negative number`);
      if (this.exhausted === 'cycle' && typeof input.source !== 'function')
        throw new TypeError(`input ${i}: exhausted 'cycle' needs a source function that makes a fresh pass`);
    }
    const n = inputs.length;
    this.current = {
      kind: 'tandem.mix',
      version: 1,
      seed: this.seed,
      draws: 0,
      emitted: 0,
      taken: new Array<number>(n).fill(0),
      passes: new Array<number>(n).fill(0),
      dropped: new Array<boolean>(n).fill(false),
    };
    this.base = structuredClone(this.current);
  }

  /** A mix continuing from `state`; every input's source must be a function (see MixInput). */
  static fromState<T>(inputs: readonly MixInput<T>[], state: MixState, options: MixOptions = {}): WeightedMix<T> {
    if (state.kind !== 'tandem.mix' || state.version !== 1 || state.taken.length !== inputs.length)
      throw new DatasetError('state-mismatch', 'not a tandem mix state for these inputs');
    const mix = new WeightedMix(inputs, { ...options, seed: state.seed });
    mix.current = structuredClone(state);
    mix.base = structuredClone(state);
    return mix;
  }

  /** The state after `count` items of this mix object (item.index + 1). */
  stateAt(count: number): MixState {
    if (count < this.base.emitted || count > this.current.emitted)
      throw new DatasetError(
        'position-unavailable',
        `mix state after ${count} items is not available (${this.base.emitted}..${this.current.emitted})`,
      );
    return this.replayTo(count).state;
  }

  private replayTo(count: number): { state: MixState; at: number } {
    const state = structuredClone(this.base);
    let at = 0;
    for (; at < this.log.length && state.emitted < count; at += 2) apply(state, this.log[at]!, this.log[at + 1]!);
    return { state, at };
  }

  private record(input: number, outcome: number): void {
    apply(this.current, input, outcome);
    this.log.push(input, outcome);
    // Fold old draws into the base, so the log stays O(stateLag) however long the mix runs.
    if (this.current.emitted - this.base.emitted > 2 * this.keep) {
      const { state, at } = this.replayTo(this.current.emitted - this.keep);
      this.base = state;
      this.log.splice(0, at);
    }
  }

  private open(i: number, pass: number, skip: number): Iterator<T> | AsyncIterator<T> {
    const input = this.inputs[i]!;
    if (typeof input.source !== 'function') {
      if (pass > 0 || skip > 0) throw new TypeError(`input ${i}: resuming needs a source function`);
      return iteratorOf(input.source);
    }
    return iteratorOf(input.source({ pass, skip: input.seekable ? skip : 0 }));
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Mixed<T>> {
    const weights = this.inputs.map((input, i) => (this.current.dropped[i] ? 0 : input.weight));
    const iterators = weights.map((w, i) => (w > 0 ? this.open(i, this.current.passes[i]!, this.current.taken[i]!) : undefined));
    let total = weights.reduce((a, b) => a + b, 0);
    try {
      // Inputs that cannot seek are brought to their position by reading.
      for (const [i, it] of iterators.entries())
        if (it && !this.inputs[i]!.seekable) for (let k = 0; k < this.current.taken[i]!; k++) await it.next();
      while (total > 0 && this.current.emitted < this.limit) {
        let r = (hash3(this.seed, this.current.draws, 0x31f) / 4294967296) * total;
        let i = 0;
        while (i < weights.length - 1 && (r >= weights[i]! || weights[i] === 0)) r -= weights[i++]!;
        // Rounding can carry r past the last live input onto a dropped one: step back to a live one.
        while (weights[i] === 0 && i > 0) i--;
        let step = await iterators[i]!.next();
        if (step.done === true && this.exhausted === 'cycle') {
          iterators[i] = this.open(i, this.current.passes[i]! + 1, 0);
          step = await iterators[i]!.next();
          if (step.done !== true) {
            this.record(i, CYCLED);
            yield { input: i, value: step.value, index: this.current.emitted - 1 };
            continue;
          }
        }
        if (step.done !== true) {
          this.record(i, EMITTED);
          yield { input: i, value: step.value, index: this.current.emitted - 1 };
          continue;
        }
        if (this.exhausted === 'stop') return;
        // 'drop', or a cycling input that is empty even when started afresh: it can never contribute.
        this.record(i, DROPPED);
        total -= weights[i]!;
        weights[i] = 0;
        iterators[i] = undefined;
      }
    } finally {
      // Leaving early (break, stop) closes the inputs still open, e.g. shard streams holding a fetch.
      await Promise.all(iterators.map((it) => it?.return?.()));
    }
  }
}

function apply(state: MixState, input: number, outcome: number): void {
  state.draws++;
  if (outcome === DROPPED) {
    state.dropped[input] = true;
    return;
  }
  if (outcome === CYCLED) {
    state.passes[input]!++;
    state.taken[input] = 0;
  }
  state.taken[input]!++;
  state.emitted++;
}

/** Yields `{ input, value, index }` items mixed from `inputs` by weight (a WeightedMix run once). */
export function mixSources<T>(inputs: readonly MixInput<T>[], options: MixOptions = {}): AsyncGenerator<Mixed<T>> {
  return new WeightedMix(inputs, options)[Symbol.asyncIterator]();
}
