/** Aggregate (items → groups) and disaggregate (groups → items) stages. */
import { OptionError } from '../errors/index.ts';
import type { RunContext } from './context.ts';
import { type BoundedQueue, CLOSED, EMPTY } from './queue.ts';
import type { StageCounters } from './counters.ts';
import { type AggregateConfig, type Aggregator, isEpochEnd } from './types.ts';

/** Fixed-size groups; with `dropLast` an incomplete final group is dropped and counted as filtered. */
export class SizeAggregator<T> implements Aggregator<T, T[]> {
  #group: T[] = [];
  #dropped = 0;

  constructor(
    private readonly size: number,
    private readonly dropLast: boolean,
  ) {}

  push(item: T): T[] | undefined {
    this.#group.push(item);
    if (this.#group.length < this.size) return undefined;
    const g = this.#group;
    this.#group = [];
    return g;
  }

  flush(): T[] | undefined {
    const g = this.#group;
    this.#group = [];
    if (g.length === 0) return undefined;
    if (this.dropLast) {
      this.#dropped += g.length;
      return undefined;
    }
    return g;
  }

  dropped(): number {
    return this.#dropped;
  }
}

export async function runAggregate(
  cfg: AggregateConfig,
  input: BoundedQueue<unknown>,
  output: BoundedQueue<unknown>,
  run: RunContext,
  s: StageCounters,
): Promise<void> {
  const agg: Aggregator<unknown, unknown> =
    cfg.create !== undefined ? cfg.create() : new SizeAggregator<unknown>(cfg.size ?? 1, cfg.dropLast);
  const emit = async (g: unknown): Promise<boolean> => {
    if (g === undefined) return true;
    if (!output.tryPut(g) && !(await output.put(g, s.loopWhileBlocked))) return false;
    s.out++;
    return true;
  };
  const flush = async (): Promise<boolean> => {
    let g: unknown;
    try {
      g = agg.flush();
    } catch (e) {
      run.fail(s, undefined, '<flush>', e);
      return true;
    }
    if (agg.dropped !== undefined) s.filtered = agg.dropped();
    return emit(g);
  };
  try {
    for (;;) {
      let item = input.tryGet();
      if (item === EMPTY) item = await input.get();
      if (item === CLOSED || run.stopped) break;
      if (isEpochEnd(item)) {
        if (!(await flush()) || !(await emit(item))) return;
        continue;
      }
      s.in++;
      const t0 = performance.now();
      s.begin(t0);
      let g: unknown;
      try {
        g = agg.push(item);
      } catch (e) {
        // An OptionError is the aggregator refusing how it was set up (a resumed state that does
        // not fit its input), not one item: it ends the pass.
        if (e instanceof OptionError) {
          run.fatal(e);
          break;
        }
        run.fail(s, undefined, item, e);
        continue;
      } finally {
        const now = performance.now();
        s.task(now - t0);
        s.end(now);
      }
      s.ok++;
      if (g !== undefined) {
        if (!output.tryPut(g) && !(await output.put(g, s.loopWhileBlocked))) return;
        s.out++;
      }
    }
    if (!run.stopped) await flush();
  } finally {
    if (run.stopped) agg.abandon?.();
  }
}

export async function runDisaggregate(
  input: BoundedQueue<unknown>,
  output: BoundedQueue<unknown>,
  run: RunContext,
  s: StageCounters,
): Promise<void> {
  for (;;) {
    let group = input.tryGet();
    if (group === EMPTY) group = await input.get();
    if (group === CLOSED || run.stopped) return;
    if (isEpochEnd(group)) {
      if (!output.tryPut(group) && !(await output.put(group, s.loopWhileBlocked))) return;
      continue;
    }
    s.in++;
    if (typeof group !== 'object' || group === null || !(Symbol.iterator in group)) {
      run.fail(s, undefined, group, new TypeError('disaggregate: item is not iterable'));
      continue;
    }
    let n = 0;
    for (const x of group as Iterable<unknown>) {
      if (!output.tryPut(x) && !(await output.put(x, s.loopWhileBlocked))) return;
      s.out++;
      n++;
    }
    if (n === 0) s.filtered++;
    else s.ok++;
  }
}
