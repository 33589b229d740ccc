/** Per-stage counters (mutated on the hot path) and the snapshots built from them. */
import type { BoundedQueue } from './queue.ts';

const RESERVOIR = 1024;

/** Fixed-size uniform sample of task times (Vitter's algorithm R), so memory stays flat. */
export class Reservoir {
  #samples = new Float64Array(RESERVOIR);
  #seen = 0;
  #rng = 0x9e3779b9;

  add(x: number): void {
    const i = this.#seen++;
    if (i < RESERVOIR) {
      this.#samples[i] = x;
      return;
    }
    // xorshift32: deterministic and allocation free.
    let r = this.#rng;
    r ^= r << 13;
    r ^= r >>> 17;
    r ^= r << 5;
    this.#rng = r >>> 0;
    const j = this.#rng % (i + 1);
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

export class StageCounters {
  in = 0;
  out = 0;
  filtered = 0;
  failed = 0;
  tasks = 0;
  /** Inputs that completed without failing or being filtered. */
  ok = 0;
  inflight = 0;
  busyMs = 0;
  firstError: unknown = undefined;
  readonly times = new Reservoir();

  constructor(
    readonly name: string,
    readonly kind: string,
    readonly concurrency: number,
  ) {}

  task(ms: number): void {
    this.tasks++;
    this.busyMs += ms;
    this.times.add(ms);
  }
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
  readonly taskMs: { mean: number; p50: number; p90: number; p99: number };
  /** The stage's input queue: mean fill seen by the stage, and time spent blocked on it. */
  readonly queue: { capacity: number; meanFill: number; putWaitMs: number; getWaitMs: number };
  readonly itemsPerSec: number;
  /** busy time / (elapsed × concurrency); the stage nearest 1 is the bottleneck. */
  readonly utilization: number;
}

export interface PipelineStats {
  readonly elapsedMs: number;
  readonly running: boolean;
  readonly delivered: number;
  readonly stages: readonly StageStats[];
  /** Stats of the pipelines feeding a merge source, if any. */
  readonly merged: readonly PipelineStats[];
}

export function snapshotStage(c: StageCounters, q: BoundedQueue<unknown> | undefined, elapsedMs: number): StageStats {
  const secs = Math.max(elapsedMs, 1e-3) / 1000;
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
    taskMs: { mean: c.tasks ? c.busyMs / c.tasks : 0, ...c.times.percentiles() },
    queue: {
      capacity: q?.capacity ?? 0,
      meanFill: q && q.gets ? q.fillSum / q.gets : 0,
      putWaitMs: q?.putWaitMs ?? 0,
      getWaitMs: q?.getWaitMs ?? 0,
    },
    itemsPerSec: c.out / secs,
    utilization: Math.min(1, c.busyMs / (Math.max(elapsedMs, 1e-3) * c.concurrency)),
  };
}

export function bottleneck(stats: PipelineStats): StageStats | undefined {
  let best: StageStats | undefined;
  for (const s of stats.stages) {
    if (s.kind === 'source') continue;
    if (best === undefined || s.utilization > best.utilization) best = s;
  }
  return best;
}

/** One line: per stage rate, p50 and input-queue fill; the bottleneck is marked with `*`. */
export function formatStats(stats: PipelineStats): string {
  const slow = bottleneck(stats);
  const parts = stats.stages.map((s) => {
    const mark = s === slow ? '*' : '';
    const fails = s.failed ? ` ${s.failed} failed` : '';
    if (s.kind === 'source') return `${s.name} ${s.out}`;
    return (
      `${mark}${s.name}[${s.concurrency}] ${s.itemsPerSec.toFixed(0)}/s ` +
      `p50 ${s.taskMs.p50.toFixed(2)}ms busy ${(s.utilization * 100).toFixed(0)}% ` +
      `q ${s.queue.meanFill.toFixed(1)}/${s.queue.capacity}${fails}`
    );
  });
  const tail = slow ? ` | bottleneck: ${slow.name}` : '';
  return `${parts.join(' → ')} → ${stats.delivered} delivered in ${(stats.elapsedMs / 1000).toFixed(2)}s${tail}`;
}
