// Turns cumulative pipeline statistics into per-interval stage occupancy for live charts.
import type { PipelineStats } from '../pipeline/index.ts';
import type { StageOccupancy } from './events.ts';

/** Remembers each stage's busy time at the previous sample, to report busy-ness per interval. */
export class OccupancyMeter {
  #busyMs = new Map<string, number>();
  #elapsedMs = 0;

  sample(stats: PipelineStats): StageOccupancy[] {
    const intervalMs = Math.max(stats.elapsedMs - this.#elapsedMs, 1e-3);
    this.#elapsedMs = stats.elapsedMs;
    const out: StageOccupancy[] = [];
    for (const s of stats.stages) {
      if (s.kind === 'source') continue;
      // utilization = busy / (elapsed × concurrency), clamped at 1: undo it to get busy time.
      const busyMs = s.utilization * Math.max(stats.elapsedMs, 1e-3) * s.concurrency;
      const before = this.#busyMs.get(s.name) ?? 0;
      this.#busyMs.set(s.name, busyMs);
      out.push({
        name: s.name,
        queueFill: s.queue.capacity ? s.queue.meanFill / s.queue.capacity : 0,
        busy: Math.min(1, Math.max(0, (busyMs - before) / (intervalMs * s.concurrency))),
        inflight: s.inflight,
        concurrency: s.concurrency,
      });
    }
    return out;
  }
}
