/** Sources: an iterable (with epochs) or a seeded merge of other pipelines. */
import type { RunContext } from './context.ts';
import type { BoundedQueue } from './queue.ts';
import type { StageCounters } from './counters.ts';
import { epochEnd, type FailureBudget, type IterableSourceConfig, type MergeSourceConfig } from './types.ts';
import { seededFloats } from '../random/index.ts';
import { EventLoopTurns } from './turns.ts';

export async function runIterableSource(
  cfg: IterableSourceConfig,
  out: BoundedQueue<unknown>,
  run: RunContext,
  s: StageCounters,
  overall: FailureBudget | undefined,
): Promise<void> {
  const epochs = cfg.repeat === true ? Infinity : cfg.repeat;
  const minItems = overall?.minItems;
  // The source's one slot works (produces the next item: the iterator's own time, e.g. an async
  // read) except while its output queue is full.
  s.begin(performance.now());
  const turns = new EventLoopTurns();
  try {
    for (let epoch = 0; epoch < epochs && !run.stopped; epoch++) {
      const src = typeof cfg.iterable === 'function' ? cfg.iterable() : cfg.iterable;
      const before = s.out;
      // for-of / for-await call the iterator's return() when we leave early.
      if (Symbol.asyncIterator in src) {
        for await (const x of src) {
          if (run.stopped || (!out.tryPut(x) && !(await out.put(x, s.holdWhileBlocked)))) return;
          if (++s.out === minItems) run.checkBudget(undefined, undefined);
          const turn = turns.due();
          if (turn) await turn;
        }
      } else {
        for (const x of src) {
          if (run.stopped || (!out.tryPut(x) && !(await out.put(x, s.holdWhileBlocked)))) return;
          if (++s.out === minItems) run.checkBudget(undefined, undefined);
          const turn = turns.due();
          if (turn) await turn;
        }
      }
      if (cfg.epochMarker && !(await out.put(epochEnd(epoch), s.holdWhileBlocked))) return;
      // An endless repeat of an empty (or exhausted one-shot) source would spin forever.
      if (s.out === before && cfg.repeat === true) return;
    }
  } finally {
    turns.close();
    s.end(performance.now());
  }
}

/** The view a merge source needs of each input pipeline. */
export interface MergeInput {
  next(): Promise<IteratorResult<unknown>>;
  stop(): Promise<void>;
}

/**
 * Always waits for the input it picked (never for "whichever is ready first"), so the order
 * depends only on the seed and on each input's own order.
 */
export async function runMergeSource(
  cfg: MergeSourceConfig,
  inputs: readonly MergeInput[],
  out: BoundedQueue<unknown>,
  run: RunContext,
  s: StageCounters,
): Promise<void> {
  const live = inputs.map((_, i) => i);
  const weights = cfg.weights ?? inputs.map(() => 1);
  const random = seededFloats(cfg.seed);
  let rr = 0;
  try {
    while (live.length > 0 && !run.stopped) {
      let k = rr % live.length;
      if (cfg.mode === 'weighted') {
        let total = 0;
        for (const i of live) total += weights[i] ?? 0;
        let r = random() * total;
        for (k = 0; k < live.length - 1; k++) {
          r -= weights[live[k] ?? 0] ?? 0;
          if (r < 0) break;
        }
      }
      const input = inputs[live[k] ?? 0];
      if (input === undefined) break;
      // Waiting for the input pipelines counts as starved (their own stats are in `merged`).
      const r = await input.next();
      if (r.done === true) {
        live.splice(k, 1);
        rr = k;
        continue;
      }
      rr = k + 1;
      if (run.stopped || (!out.tryPut(r.value) && !(await out.put(r.value, s.loopWhileBlocked)))) return;
      s.out++;
    }
  } finally {
    await Promise.all(inputs.map((p) => p.stop()));
  }
}
