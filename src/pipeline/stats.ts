/** Per-stage counters (mutated on the hot path) and the snapshots built from them. */
import { Rng } from '../random/index.ts';
import type { BoundedQueue, PutObserver } from './queue.ts';

const RESERVOIR = 1024;

/** Fixed-size uniform sample of task times (Vitter's algorithm R), so memory stays flat. */
export class Reservoir {
  #samples = new Float64Array(RESERVOIR);
  #seen = 0;
  readonly #rng = new Rng(0x9e3779b9);

  add(x: number): void {
    const i = this.#seen++;
    if (i < RESERVOIR) {
      this.#samples[i] = x;
      return;
    }
    const j = this.#rng.int(i + 1); // the project's seeded generator: deterministic, allocation free
    if (j < RESERVOIR) this.#samples[j] = x;
  }

  percentiles(): { p50: number; p90: number; p99: number } {
    const n = Math.min(this.#seen, RESERVOIR);
    if (n === 0) return { p50: 0, p90: 0, p99: 0 };
    const s = this.#samples.slice(0, n).sort();
    const at = (q: number): number => s[Math.min(n - 1, Math.floor(q * n))] ?? 0;
    return { p50: at(0.5), p90: at(0.9), p99: at(0.99) };
  }
}

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

/**
 * Per-stage counters. Time is integrated from slot levels: every change of state first calls
 * `tick(now)`, which adds (now − last change) × slots in each state. No allocation, one
 * `performance.now()` per state change (the hot path already took one per task start and end).
 */
export class StageCounters {
  in = 0;
  out = 0;
  filtered = 0;
  failed = 0;
  tasks = 0;
  /** Inputs that completed without failing or being filtered. */
  ok = 0;
  inflight = 0;
  /** Sum of task wall times (for taskMs); the time split below is what names the bottleneck. */
  taskMsSum = 0;
  firstError: unknown = undefined;
  readonly times = new Reservoir();
  /** Slots running the stage's own code. */
  working = 0;
  /** Slots inside a resource wait (`beginWait` … `endWait`). */
  waiting = 0;
  /** Slots whose result is being put into a full output queue. */
  holding = 0;
  /**
   * Input-ordered stages: finished results waiting in the ring for their turn. They count as
   * blocked while the ring's emitter waits on the output queue (`emitBlocked`), and as working
   * otherwise: then they wait for an earlier input of the same stage, which is the stage's own
   * time (head-of-line), not backpressure.
   */
  queued = 0;
  emitBlocked = 0;
  /** > 0 while the stage loop itself waits on its output queue: its free slots are blocked too. */
  loopBlocked = 0;
  workingMs = 0;
  resourceMs = 0;
  blockedMs = 0;
  #t = 0;
  /** For `queue.put(x, …)`: a working slot holds its output while the put waits. */
  readonly holdWhileBlocked: PutObserver = { blocked: (now) => this.hold(now), unblocked: (now) => this.unhold(now) };
  /** For `queue.put(x, …)` from a stage loop: the loop (every free slot) is blocked while it waits. */
  readonly loopWhileBlocked: PutObserver = { blocked: (now) => this.blockLoop(now), unblocked: (now) => this.unblockLoop(now) };

  constructor(
    readonly name: string,
    readonly kind: string,
    readonly concurrency: number,
  ) {}

  task(ms: number): void {
    this.tasks++;
    this.taskMsSum += ms;
    this.times.add(ms);
  }

  /** Integrates the slot levels up to `now` (a time before the last change adds nothing). */
  tick(now: number): void {
    const dt = now - this.#t;
    if (!(dt > 0)) return;
    this.#t = now;
    let w = this.working > 0 ? this.working : 0;
    let b = this.holding > 0 ? this.holding : 0;
    const r = this.waiting > 0 ? this.waiting : 0;
    if (this.queued > 0) {
      if (this.emitBlocked > 0) b += this.queued;
      else w += this.queued;
    }
    if (this.loopBlocked > 0) b = this.concurrency - w - r;
    if (w > 0) this.workingMs += dt * w;
    if (r > 0) this.resourceMs += dt * r;
    if (b > 0) this.blockedMs += dt * b;
  }

  /** A slot starts running the stage's code. */
  begin(now: number): void {
    this.tick(now);
    this.working++;
  }

  /** A running slot is done and free again. */
  end(now: number): void {
    this.tick(now);
    this.working--;
  }

  /** A running slot now holds a result that cannot leave yet. */
  hold(now: number): void {
    this.tick(now);
    this.working--;
    this.holding++;
  }

  /** A holding slot goes back to running (a generator whose output was taken). */
  unhold(now: number): void {
    this.tick(now);
    this.holding--;
    this.working++;
  }

  /** A holding slot's result left: the slot is free. */
  release(now: number): void {
    this.tick(now);
    this.holding--;
  }

  /** Input order: a finished result goes into the ring to wait for its turn. */
  enqueue(now: number): void {
    this.tick(now);
    this.working--;
    this.queued++;
  }

  /** Input order: a result left the ring straight into the output queue; its slot is free. */
  dequeue(now: number): void {
    this.tick(now);
    this.queued--;
  }

  /** Input order: a result left the ring but the output is full: the emitter blocks. */
  dequeueBlocked(now: number): void {
    this.tick(now);
    this.queued--;
    this.holding++;
    this.emitBlocked++;
  }

  /** Input order: the blocked emitter's result left; its slot is free. */
  emitted(now: number): void {
    this.tick(now);
    this.holding--;
    this.emitBlocked--;
  }

  blockLoop(now: number): void {
    this.tick(now);
    this.loopBlocked++;
  }

  unblockLoop(now: number): void {
    this.tick(now);
    this.loopBlocked--;
  }

  /** A running slot starts waiting for a pooled resource. */
  beginWait(now: number): void {
    this.tick(now);
    this.working--;
    this.waiting++;
  }

  endWait(now: number): void {
    this.tick(now);
    this.waiting--;
    this.working++;
  }
}

/**
 * The `waitFor` / `beginWait` / `endWait` members of a stage context (and of `pipeline.consumer`):
 * made once per stage, so bracketing a wait allocates nothing beyond `waitFor`'s own promise.
 */
export interface ResourceWaits {
  waitFor<T>(wait: PromiseLike<T>): Promise<T>;
  beginWait(): void;
  endWait(): void;
}

export function resourceWaits(c: StageCounters): ResourceWaits {
  const beginWait = (): void => c.beginWait(performance.now());
  const endWait = (): void => c.endWait(performance.now());
  return {
    beginWait,
    endWait,
    async waitFor<T>(wait: PromiseLike<T>): Promise<T> {
      beginWait();
      try {
        return await wait;
      } finally {
        endWait();
      }
    },
  };
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
  const working = Math.min(Math.max(0, c.workingMs - notWorkingMs), total);
  const resource = Math.min(c.resourceMs, total - working);
  const blocked = Math.min(c.blockedMs, total - working - resource);
  const starved = Math.max(0, total - working - resource - blocked);
  const timeMs = { working, starved, blocked, resource };
  const time = { working: working / total, starved: starved / total, blocked: blocked / total, resource: resource / total };
  return { timeMs, time };
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

/** What limits the pipeline's throughput, judged from working time only. */
export interface Bottleneck {
  /** A stage's name, the consumer's name, or what the consumer waited for (e.g. 'GPU'). */
  readonly name: string;
  /** 'consumer-wait': the consumer is the limit and mostly waited for `name` (its resource). */
  readonly kind: 'source' | 'stage' | 'consumer' | 'consumer-wait';
  /** The stage, for kinds 'source' and 'stage'. */
  readonly stage: StageStats | undefined;
  /**
   * The share that decided: a stage's working share, or the consumer's share of time outside
   * `next()` (its work plus its own waits, e.g. for the GPU).
   */
  readonly share: number;
  /** A short phrase: why this one. */
  readonly reason: string;
}

const pct = (x: number): string => `${(x * 100).toFixed(0)}%`;

/**
 * Names the bottleneck from working time only: blocked-on-output, starved and resource-wait time
 * never count. The candidate with the largest working share wins: the source, each stage, and
 * the consumer (whose "working" is all its time outside `next()`). The consumer also wins when
 * every stage spent most of its time blocked on output or waiting for a pooled resource (the
 * whole loader is held back from downstream). A consumer that mostly waited for something it
 * named (`pipeline.consumer.waitFor(p, 'GPU')`) is reported by that name.
 */
export function bottleneck(stats: PipelineStats): Bottleneck | undefined {
  let best = stats.stages[0];
  if (!(stats.elapsedMs > 0) || best === undefined) return undefined;
  for (const s of stats.stages) if (s.time.working > best.time.working) best = s;
  const c = stats.consumer;
  const consumerShare = c.time.working + c.time.resource;
  const heldBack = stats.stages.every((s) => s.time.blocked + s.time.resource >= 0.5);
  const wins = consumerShare > best.time.working;
  if (wins || heldBack) {
    if (c.resource !== undefined && c.time.resource > c.time.working) {
      return {
        name: c.resource,
        kind: 'consumer-wait',
        stage: undefined,
        share: consumerShare,
        reason: `${c.name} waited for it ${pct(c.time.resource)} of the time`,
      };
    }
    const reason = wins
      ? `busy ${pct(consumerShare)} of the time`
      : 'every stage mostly blocked on output or waiting for a pooled resource';
    return { name: c.name, kind: 'consumer', stage: undefined, share: consumerShare, reason };
  }
  return {
    name: best.name,
    kind: best.kind === 'source' ? 'source' : 'stage',
    stage: best,
    share: best.time.working,
    reason: `working ${pct(best.time.working)}`,
  };
}

/** "work 12% starved 3% blocked 80% resource 5%", leaving out parts under 0.5% (work is always shown). */
/**
 * The four parts of a stage's time in stacking order (working at the bottom), with the labels and
 * colours the HTML report and the demo page draw them in.
 */
export const TIME_PARTS = [
  { key: 'working', label: 'working', colour: '#1f77b4' },
  { key: 'resource', label: 'waiting for a pooled resource', colour: '#9467bd' },
  { key: 'blocked', label: 'blocked on output', colour: '#ff7f0e' },
  { key: 'starved', label: 'waiting for input', colour: '#d0d0d0' },
] as const satisfies ReadonlyArray<{ key: keyof TimeSplit; label: string; colour: string }>;

export function formatSplit(t: TimeSplit, resourceName = 'resource'): string {
  let out = `work ${pct(t.working)}`;
  if (t.starved >= 0.005) out += ` starved ${pct(t.starved)}`;
  if (t.blocked >= 0.005) out += ` blocked ${pct(t.blocked)}`;
  if (t.resource >= 0.005) out += ` ${resourceName} ${pct(t.resource)}`;
  return out;
}

/**
 * One line: per stage rate, p50, where its time went and its input-queue fill, then the consumer;
 * the bottleneck is marked with `*` and named at the end.
 */
export function formatStats(stats: PipelineStats): string {
  const slow = bottleneck(stats);
  const parts = stats.stages.map((s) => {
    const mark = s === slow?.stage ? '*' : '';
    const fails = s.failed ? ` ${s.failed} failed` : '';
    if (s.kind === 'source') return `${mark}${s.name} ${s.out} (${formatSplit(s.time)})`;
    return (
      `${mark}${s.name}[${s.concurrency}] ${s.itemsPerSec.toFixed(0)}/s ` +
      `p50 ${s.taskMs.p50.toFixed(2)}ms ${formatSplit(s.time)} ` +
      `q ${s.queue.meanFill.toFixed(1)}/${s.queue.capacity}${fails}`
    );
  });
  const c = stats.consumer;
  const cmark = slow !== undefined && slow.stage === undefined ? '*' : '';
  const consumer = `${cmark}${c.name} (${formatSplit(c.time, c.resource ?? 'resource')})`;
  const tail = slow ? ` | bottleneck: ${slow.name} (${slow.reason})` : '';
  return `${parts.join(' → ')} → ${consumer}: ${stats.delivered} delivered in ${(stats.elapsedMs / 1000).toFixed(2)}s${tail}`;
}
