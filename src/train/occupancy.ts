// Turns cumulative pipeline statistics into per-interval stage occupancy for live charts: for
// each stage (the source and the consumer included), where its time went since the last sample.
import type { PipelineStats, TimeSplit } from '../pipeline/index.ts';
import type { StageOccupancy } from './events.ts';

const PARTS = ['working', 'starved', 'blocked', 'resource'] as const;

/** Remembers each stage's cumulative time split at the previous sample. */
export class OccupancyMeter {
  #before = new Map<string, TimeSplit>();
  #elapsedMs = 0;

  sample(stats: PipelineStats): StageOccupancy[] {
    const intervalMs = Math.max(stats.elapsedMs - this.#elapsedMs, 1e-3);
    this.#elapsedMs = stats.elapsedMs;
    const split = (key: string, timeMs: TimeSplit, concurrency: number) => {
      const before = this.#before.get(key);
      this.#before.set(key, timeMs);
      const time = { working: 0, starved: 0, blocked: 0, resource: 0 };
      for (const part of PARTS) time[part] = Math.min(1, Math.max(0, (timeMs[part] - (before?.[part] ?? 0)) / (intervalMs * concurrency)));
      return time;
    };
    const out: StageOccupancy[] = stats.stages.map((s) => {
      const time = split(`stage:${s.name}`, s.timeMs, s.concurrency);
      return {
        name: s.name,
        kind: s.kind,
        queueFill: s.queue.capacity ? s.queue.meanFill / s.queue.capacity : 0,
        busy: time.working,
        time,
        inflight: s.inflight,
        concurrency: s.concurrency,
      };
    });
    const c = stats.consumer;
    const time = split('consumer', c.timeMs, 1);
    out.push({
      name: c.name,
      kind: 'consumer',
      queueFill: 0,
      busy: time.working,
      time,
      ...(c.resource !== undefined ? { resourceName: c.resource } : {}),
      inflight: 0,
      concurrency: 1,
    });
    return out;
  }
}
