// Figures per row, ratios and the markdown of docs/bench/decode.md (medians: bench/shared/stats.ts).
import { fixed, median } from '../shared/stats.ts';
import type { Sample, Transform } from './types.ts';

export interface Row {
  /** Table row, e.g. "wasm in Deno, 2 threads". */
  label: string;
  group: string;
  threads: number;
  samples: Partial<Record<Transform, Sample[]>>;
}

export interface Figures {
  rate: number; // images delivered per second (failed items excluded), median over passes
  cpuMs: number; // CPU ms per image, median
  failed: number; // most failures in one pass
  hangs: number;
  reloads: number;
  maxRssKb?: number;
}

export function figures(samples: Sample[] | undefined, images: number): Figures | undefined {
  if (!samples?.length) return undefined;
  const rss = samples.map((s) => s.maxRssKb).filter((v): v is number => v !== undefined);
  return {
    rate: median(samples.map((s) => (images - s.failed) / s.seconds)),
    cpuMs: (median(samples.map((s) => s.cpu)) / images) * 1000,
    failed: Math.max(...samples.map((s) => s.failed)),
    hangs: Math.max(...samples.map((s) => s.hangs ?? 0)),
    reloads: samples.reduce((n, s) => n + (s.reloads ?? 0), 0),
    ...(rss.length ? { maxRssKb: Math.max(...rss) } : {}),
  };
}

export function table(headers: string[], rows: string[][]): string[] {
  return [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
}

export interface Goal {
  what: string;
  ratio: number | undefined;
  target: number;
}

export function goalRows(goals: Goal[]): string[][] {
  return goals.map((g) => [
    g.what,
    fixed(g.ratio),
    `≥ ${g.target}`,
    g.ratio === undefined ? 'not measured' : g.ratio >= g.target ? 'met' : '**short**',
  ]);
}
