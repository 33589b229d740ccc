// Reading a pipeline's statistics: which part limits its throughput, and the one-line text and
// chart colours the CLI, the HTML report and the demo show.
import type { PipelineStats, StageStats, TimeSplit } from './stats.ts';

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
