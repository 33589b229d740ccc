// Snapshots of a pipeline's counters: what each stage did and where its slot time went, split
// four ways that add up to elapsed × concurrency. The reading of them (the bottleneck, the text)
// is in bottleneck.ts.
import { invariant } from '../errors/index.ts';
import type { StageCounters } from './counters.ts';
import type { BoundedQueue } from './queue.ts';

/**
 * Where a stage's time goes. Each of a stage's `concurrency` slots is, at every moment, in exactly
 * one of four states; the parts are sums over slots, so they add up to elapsed × concurrency.
 */
export interface TimeSplit {
  /** Running the stage's own code (task in flight, not inside a resource wait). */
  readonly working: number;
  /** Waiting for input: the slot is free and the stage has nothing to start. */
  readonly starved: number;
  /** Blocked on output: a finished result cannot leave (the next queue is full, or an earlier input's result has not left yet). */
  readonly blocked: number;
  /** Waiting for a pooled resource (a batch buffer, a GPU slot), bracketed by `ctx.waitFor`. */
  readonly resource: number;
}

export interface StageStats {
  readonly name: string;
  readonly kind: string;
  readonly concurrency: number;
  readonly in: number;
  readonly out: number;
  readonly filtered: number;
  readonly failed: number;
  readonly tasks: number;
  readonly inflight: number;
  /** Wall time of a task, start to settle (resource waits included). */
  readonly taskMs: { mean: number; p50: number; p90: number; p99: number };
  /** The stage's input queue: mean fill seen by the stage, and time spent blocked on it. */
  readonly queue: { capacity: number; meanFill: number; putWaitMs: number; getWaitMs: number };
  readonly itemsPerSec: number;
  /** Slot-milliseconds in each state; they add up to elapsedMs × concurrency. */
  readonly timeMs: TimeSplit;
  /** The same as shares of elapsedMs × concurrency (they add up to 1). */
  readonly time: TimeSplit;
  /** `time.working`: the share of slot time spent running the stage's own code. */
  readonly utilization: number;
}

/** The code that iterates the pipeline (`for await`, `next()`), seen from the pipeline. */
export interface ConsumerStats {
  /** `build({ consumer })` or `pipeline.consumer.name` (default 'consumer'). */
  readonly name: string;
  /** What the consumer said it waited for (`pipeline.consumer.waitFor(p, resource)`), if anything. */
  readonly resource: string | undefined;
  /**
   * working: outside `next()` and outside its own resource waits; starved: inside `next()`
   * waiting for an item; resource: inside `pipeline.consumer.waitFor`; blocked: always 0.
   */
  readonly timeMs: TimeSplit;
  readonly time: TimeSplit;
}

export interface PipelineStats {
  readonly elapsedMs: number;
  readonly running: boolean;
  readonly delivered: number;
  readonly stages: readonly StageStats[];
  readonly consumer: ConsumerStats;
  /** Stats of the pipelines feeding a merge source, if any. */
  readonly merged: readonly PipelineStats[];
}

/**
 * Ticks `c` up to `now` and splits its slot time (elapsedMs × concurrency) four ways.
 * `notWorkingMs` is taken off the working time (it becomes starved): the consumer's time inside
 * next(), which its counters do not see.
 */
export function timeSplit(c: StageCounters, elapsedMs: number, now: number, notWorkingMs = 0): { timeMs: TimeSplit; time: TimeSplit } {
  c.tick(now);
  const total = Math.max(elapsedMs, 1e-3) * c.concurrency;
  // The parts are integrated from the slot levels, so they cannot exceed the slot time: one that
  // does is an accounting bug, not noise, and fails loudly. Only the moment between taking the
  // start time and the first state change (under a millisecond per slot) is tolerated.
  const slack = c.concurrency + total * 1e-9;
  const working = part(c, 'working', c.workingMs - notWorkingMs, total, slack);
  const resource = part(c, 'resource', c.resourceMs, total - working, slack);
  const blocked = part(c, 'blocked', c.blockedMs, total - working - resource, slack);
  const starved = total - working - resource - blocked;
  const timeMs = { working, starved, blocked, resource };
  const time = { working: working / total, starved: starved / total, blocked: blocked / total, resource: resource / total };
  return { timeMs, time };
}

/** `ms`, checked to lie within [0, room] give or take `slack`, then held to it. */
function part(c: StageCounters, name: string, ms: number, room: number, slack: number): number {
  invariant(
    ms >= -slack && ms <= room + slack,
    `stage ${c.name}: ${name} time ${ms.toFixed(3)} ms is outside the ${room.toFixed(3)} ms of slot time left`,
  );
  return Math.min(Math.max(ms, 0), room);
}

export function snapshotStage(c: StageCounters, q: BoundedQueue<unknown> | undefined, elapsedMs: number, now: number): StageStats {
  const secs = Math.max(elapsedMs, 1e-3) / 1000;
  const { timeMs, time } = timeSplit(c, elapsedMs, now);
  return {
    name: c.name,
    kind: c.kind,
    concurrency: c.concurrency,
    in: c.in,
    out: c.out,
    filtered: c.filtered,
    failed: c.failed,
    tasks: c.tasks,
    inflight: c.inflight,
    taskMs: { mean: c.tasks ? c.taskMsSum / c.tasks : 0, ...c.times.percentiles() },
    queue: {
      capacity: q?.capacity ?? 0,
      meanFill: q && q.gets ? q.fillSum / q.gets : 0,
      putWaitMs: q?.putWaitMs ?? 0,
      getWaitMs: q?.getWaitMs ?? 0,
    },
    itemsPerSec: c.out / secs,
    timeMs,
    time,
    utilization: time.working,
  };
}
