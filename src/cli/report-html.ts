// The training report as one self-contained HTML page: inline SVG charts of loss, accuracy,
// images/s and where each loader stage's time went (working, starved, blocked on output, waiting
// for a pooled resource), the epoch table and the per-stage summary. No scripts, no external
// files: it opens anywhere, also from a CI artifact.
import { bottleneck, formatStats, TIME_PARTS, type PipelineStats } from '../pipeline/index.ts';
import type { StageOccupancy, TrainReport } from '../train/index.ts';

interface Series {
  name: string;
  points: readonly (readonly [number, number])[];
}

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

const PARTS = TIME_PARTS;

const W = 460,
  L = 44,
  R = 12,
  B = 30,
  PLOT_H = 150;
const FONT = 'font-family="system-ui,sans-serif"';

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

function fmt(v: number): string {
  if (v === 0) return '0';
  return Math.abs(v) >= 100 ? v.toFixed(0) : Number(v.toPrecision(2)).toString();
}

/** About `count` round tick values covering [lo, hi] (steps of 1, 2 or 5 × 10^k). */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  const span = hi - lo;
  if (!(span > 0) || !Number.isFinite(span)) return [lo];
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * mag >= raw) ?? 10) * mag;
  const ticks: number[] = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) ticks.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return ticks;
}

/** The smallest round tick value at or above `top`. */
function niceMax(top: number): number {
  const ticks = niceTicks(0, top, 4);
  const last = ticks.at(-1) ?? top;
  return last >= top ? last : last + (ticks.length > 1 ? ticks[1]! - ticks[0]! : top);
}

/** A legend laid out in rows above the plot area (never over the data): returns its SVG and height. */
function legend(items: readonly { name: string; colour: string }[], top: number): { svg: string; height: number } {
  let x = L,
    row = 0;
  const parts: string[] = [];
  for (const it of items) {
    const width = 16 + it.name.length * 6.2 + 12;
    if (x + width > W - R && x > L) {
      x = L;
      row++;
    }
    const y = top + row * 15;
    parts.push(
      `<rect x="${x}" y="${y - 8}" width="10" height="10" fill="${it.colour}"/><text x="${x + 14}" y="${y + 1}" font-size="11">${escapeHtml(it.name)}</text>`,
    );
    x += width;
  }
  return { svg: parts.join(''), height: items.length ? (row + 1) * 15 + 4 : 0 };
}

/** Axes with ticks and light grid lines; x in seconds from 0 to xMax, y from y0 to y1. */
function axes(
  top: number,
  xMax: number,
  y0: number,
  y1: number,
  yFormat: (v: number) => string = fmt,
): { svg: string; sx: (x: number) => number; sy: (y: number) => number; height: number } {
  const H = top + PLOT_H + B;
  const sx = (x: number) => L + (x / xMax) * (W - L - R);
  const sy = (y: number) => top + (1 - (y - y0) / (y1 - y0 || 1)) * PLOT_H;
  const out: string[] = [];
  for (const t of niceTicks(y0, y1, 4)) {
    const y = sy(t).toFixed(1);
    out.push(
      `<line x1="${L}" y1="${y}" x2="${W - R}" y2="${y}" stroke="#eee"/><line x1="${L - 4}" y1="${y}" x2="${L}" y2="${y}" stroke="#888"/>` +
        `<text x="${L - 6}" y="${Number(y) + 3.5}" font-size="10" text-anchor="end">${yFormat(t)}</text>`,
    );
  }
  for (const t of niceTicks(0, xMax, 6)) {
    const x = sx(t).toFixed(1);
    out.push(
      `<line x1="${x}" y1="${top + PLOT_H}" x2="${x}" y2="${top + PLOT_H + 4}" stroke="#888"/>` +
        `<text x="${x}" y="${top + PLOT_H + 15}" font-size="10" text-anchor="middle">${fmt(t)}</text>`,
    );
  }
  out.push(
    `<line x1="${L}" y1="${top + PLOT_H}" x2="${W - R}" y2="${top + PLOT_H}" stroke="#888"/><line x1="${L}" y1="${top}" x2="${L}" y2="${top + PLOT_H}" stroke="#888"/>` +
      `<text x="${W - R}" y="${H - 3}" font-size="10" text-anchor="end">seconds</text>`,
  );
  return { svg: out.join(''), sx, sy, height: H };
}

function figure(title: string, height: number, body: string): string {
  return (
    `<figure><svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" ${FONT} role="img" aria-label="${escapeHtml(title)}">` +
    `<text x="${L}" y="14" font-size="12" font-weight="bold">${escapeHtml(title)}</text>${body}</svg></figure>`
  );
}

/** One SVG line chart; x is seconds, y spans [0, max] (or the given range); legend above the plot. */
export function svgChart(title: string, series: readonly Series[], yRange?: [number, number], yFormat?: (v: number) => string): string {
  const all = series.flatMap((s) => s.points).filter(([, y]) => Number.isFinite(y));
  const xMax = Math.max(1e-9, ...all.map(([x]) => x));
  const yTop = Math.max(1e-9, ...all.map(([, y]) => y));
  const [y0, y1] = yRange ?? [0, niceMax(yTop)];
  const key = legend(series.length > 1 ? series.map((s, i) => ({ name: s.name, colour: COLOURS[i % COLOURS.length]! })) : [], 30);
  const { svg: frame, sx, sy, height } = axes(24 + key.height + 6, xMax, y0, y1, yFormat);
  const lines = series.map((s, i) => {
    const d = s.points
      .filter(([, y]) => Number.isFinite(y))
      .map(([x, y], j) => `${j ? 'L' : 'M'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`)
      .join('');
    return d
      ? `<path d="${d}" fill="none" stroke="${COLOURS[i % COLOURS.length]}" stroke-width="1.5"><title>${escapeHtml(s.name)}</title></path>`
      : '';
  });
  return figure(title, height, `${frame}${lines.join('')}${key.svg}`);
}

const percent = (v: number) => `${Math.round(v * 100)}%`;

/**
 * One stage's time over the run as stacked areas: per stats interval, the shares of working,
 * waiting for a resource, blocked on output and waiting for input (they add up to 1).
 */
export function svgStageTimeChart(title: string, samples: readonly { seconds: number; stage: StageOccupancy | undefined }[]): string {
  const xMax = Math.max(1e-9, ...samples.map((s) => s.seconds));
  const resourceName = samples.find((s) => s.stage?.resourceName)?.stage?.resourceName;
  const items = PARTS.map((p) => ({
    name: p.key === 'resource' && resourceName ? `waiting for ${resourceName}` : p.label,
    colour: p.colour,
  }));
  const key = legend(items, 30);
  const { svg: frame, sx, sy, height } = axes(24 + key.height + 6, xMax, 0, 1, percent);
  const areas: string[] = [];
  const base = new Float64Array(samples.length);
  for (const p of PARTS) {
    // Each interval ends at its sample's time and starts at the previous one's (0 for the first).
    const upper: string[] = [],
      lower: string[] = [];
    samples.forEach((s, i) => {
      const x0 = sx(i === 0 ? 0 : samples[i - 1]!.seconds).toFixed(1),
        x1 = sx(s.seconds).toFixed(1);
      const v = s.stage?.time[p.key] ?? 0;
      const lo = base[i]!,
        hi = Math.min(1, lo + v);
      upper.push(`${x0},${sy(hi).toFixed(1)}`, `${x1},${sy(hi).toFixed(1)}`);
      lower.unshift(`${x1},${sy(lo).toFixed(1)}`, `${x0},${sy(lo).toFixed(1)}`); // traced back right to left
      base[i] = hi;
    });
    if (upper.length)
      areas.push(
        `<path d="M${[...upper, ...lower].join('L')}Z" fill="${p.colour}" stroke="none"><title>${escapeHtml(p.label)}</title></path>`,
      );
  }
  return figure(title, height, `${areas.join('')}${frame}${key.svg}`);
}

/** Whole-run split per stage (source, stages, consumer) as horizontal stacked bars. */
export function svgSplitBars(title: string, stats: PipelineStats): string {
  const slow = bottleneck(stats);
  const rows = [
    ...stats.stages.map((s) => ({
      name: s.kind === 'source' ? s.name : `${s.name}[${s.concurrency}]`,
      time: s.time,
      resourceName: undefined as string | undefined,
      marked: slow?.stage === s,
    })),
    {
      name: stats.consumer.name,
      time: stats.consumer.time,
      resourceName: stats.consumer.resource,
      marked: slow !== undefined && slow.stage === undefined,
    },
  ];
  const items = PARTS.map((p) => ({ name: p.label, colour: p.colour }));
  const key = legend(items, 30);
  const labelW = 120,
    top = 24 + key.height + 6,
    bar = 16,
    gap = 6;
  const x0 = labelW,
    x1 = W - R;
  const out: string[] = [];
  rows.forEach((r, i) => {
    const y = top + i * (bar + gap);
    const marked = r.marked;
    out.push(
      `<text x="${labelW - 6}" y="${y + 12}" font-size="11" text-anchor="end"${marked ? ' font-weight="bold"' : ''}>${escapeHtml(`${marked ? '▶ ' : ''}${r.name}`)}</text>`,
    );
    let x = x0;
    for (const p of PARTS) {
      const w = (r.time[p.key] ?? 0) * (x1 - x0);
      if (w <= 0) continue;
      const label = p.key === 'resource' && r.resourceName ? `waiting for ${r.resourceName}` : p.label;
      out.push(
        `<rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${bar}" fill="${p.colour}"><title>${escapeHtml(`${r.name}: ${label} ${percent(r.time[p.key])}`)}</title></rect>`,
      );
      const text = `${p.key === 'resource' && r.resourceName ? `${r.resourceName} ` : ''}${percent(r.time[p.key])}`;
      if (w > text.length * 6 + 4)
        out.push(
          `<text x="${(x + w / 2).toFixed(1)}" y="${y + 12}" font-size="10" text-anchor="middle" fill="${p.key === 'starved' ? '#222' : '#fff'}">${escapeHtml(text)}</text>`,
        );
      x += w;
    }
  });
  const axisY = top + rows.length * (bar + gap);
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    const x = (x0 + t * (x1 - x0)).toFixed(1);
    out.push(
      `<line x1="${x}" y1="${axisY - 2}" x2="${x}" y2="${axisY + 3}" stroke="#888"/><text x="${x}" y="${axisY + 14}" font-size="10" text-anchor="middle">${percent(t)}</text>`,
    );
  }
  out.push(`<line x1="${x0}" y1="${axisY - 2}" x2="${x1}" y2="${axisY - 2}" stroke="#888"/>`);
  const caption = slow
    ? `<text x="${L}" y="${axisY + 30}" font-size="11">bottleneck: ${escapeHtml(slow.name)} (${escapeHtml(slow.reason)})</text>`
    : '';
  return figure(title, axisY + 40, `${out.join('')}${key.svg}${caption}`);
}

export function reportHtml(r: TrainReport): string {
  const steps = r.timeline.steps;
  const stats = r.timeline.stats;
  const stageNames = [...new Set(stats.flatMap((s) => s.stages.map((st) => st.name)))];
  const kindOf = (name: string) => stats.flatMap((s) => s.stages).find((st) => st.name === name)?.kind;
  const loaderNames = stageNames.filter((n) => kindOf(n) !== 'source' && kindOf(n) !== 'consumer');
  const charts = [
    svgChart('training loss', [{ name: 'loss', points: steps.map((s) => [s.seconds, s.loss]) }]),
    svgChart(
      'accuracy',
      [
        { name: 'train', points: steps.map((s) => [s.seconds, s.accuracy]) },
        { name: 'held-out', points: r.epochs.map((e) => [e.endedAt, e.valAccuracy]) },
      ],
      [0, 1],
      percent,
    ),
    svgChart('images/s', [{ name: 'images/s', points: steps.map((s) => [s.seconds, s.imagesPerSecond]) }]),
    svgChart(
      'stage busy (working share per interval)',
      stageNames.map((name) => ({
        name,
        points: stats.map((s) => [s.seconds, s.stages.find((x) => x.name === name)?.busy ?? NaN] as const),
      })),
      [0, 1],
      percent,
    ),
    svgChart(
      'input queue fill (mean so far)',
      loaderNames.map((name) => ({
        name,
        points: stats.map((s) => [s.seconds, s.stages.find((x) => x.name === name)?.queueFill ?? NaN] as const),
      })),
      [0, 1],
      percent,
    ),
    svgChart(
      'share of time waiting for data',
      [{ name: 'waited', points: steps.map((s) => [s.seconds, s.waitedForData]) }],
      [0, 1],
      percent,
    ),
  ];
  const stageCharts = stageNames.map((name) =>
    svgStageTimeChart(
      `stage time: ${name}`,
      stats.map((s) => ({ seconds: s.seconds, stage: s.stages.find((x) => x.name === name) })),
    ),
  );
  const rows = r.epochs.map(
    (e) =>
      `<tr><td>${e.epoch}</td><td>${e.trainLoss.toFixed(3)}</td><td>${(e.trainAccuracy * 100).toFixed(1)}%</td>` +
      `<td>${(e.valAccuracy * 100).toFixed(1)}%</td><td>${e.imagesPerSecond.toFixed(0)}</td><td>${e.seconds.toFixed(1)}</td></tr>`,
  );
  const waited = ((r.waitedForDataSeconds / Math.max(r.seconds, 1e-9)) * 100).toFixed(0);
  const waitedGpu = ((r.waitedForGpuSeconds / Math.max(r.seconds, 1e-9)) * 100).toFixed(0);
  return `<!doctype html><html><head><meta charset="utf-8"><title>Tandem training report</title>
<style>body{font:14px system-ui,sans-serif;margin:24px;max-width:1000px}figure{display:inline-block;margin:6px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}code{font-size:12px}</style></head><body>
<h1>Tandem training report</h1>
<p>${escapeHtml(r.adapter)}; decode ${escapeHtml(r.decodeMode)}; ViT ${r.model.imageSize}px, width ${r.model.width}, depth ${r.model.depth};
${r.images.train} training / ${r.images.validation} held-out images, ${r.images.classes.length} classes; ${r.steps} steps in ${r.seconds.toFixed(1)} s;
the training loop waited for data ${waited}% and for the GPU ${waitedGpu}% of the time; bottleneck: ${escapeHtml(r.bottleneck ?? '?')}; ${r.failures} failed items.</p>
${charts.join('\n')}
<h2>Where each stage's time went</h2>
<p>Each stage's slots are at every moment working, waiting for a pooled resource (a batch buffer, a GPU slot), blocked on output (the next queue is full) or waiting for input.
The bottleneck is named from working time only; when the loader's stages are held back by what comes after them, it is the training loop (or the GPU it waits for).</p>
${r.loaderStats ? svgSplitBars('stage time split (whole run)', r.loaderStats) : ''}
${stageCharts.join('\n')}
<h2>Epochs</h2><table><tr><th>epoch</th><th>loss</th><th>train acc</th><th>held-out acc</th><th>images/s</th><th>seconds</th></tr>${rows.join('')}</table>
<h2>Loader stages</h2><p><code>${r.loaderStats ? escapeHtml(formatStats(r.loaderStats)) : ''}</code></p>
</body></html>
`;
}
