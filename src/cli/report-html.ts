// The training report as one self-contained HTML page: inline SVG line charts of loss, accuracy,
// images/s and per-stage occupancy over time, the epoch table and the per-stage summary. No
// scripts, no external files: it opens anywhere, also from a CI artifact.
import { formatStats } from '../pipeline/index.ts';
import type { TrainReport } from '../train/index.ts';

interface Series {
  name: string;
  points: readonly (readonly [number, number])[];
}

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

/** One SVG line chart; x is seconds, y spans [0, max] (or the given range). */
export function svgChart(title: string, series: readonly Series[], yRange?: [number, number]): string {
  const W = 460, H = 200, L = 44, R = 10, T = 24, B = 26;
  const all = series.flatMap((s) => s.points).filter(([, y]) => Number.isFinite(y));
  const xMax = Math.max(1e-9, ...all.map(([x]) => x));
  const [y0, y1] = yRange ?? [0, Math.max(1e-9, ...all.map(([, y]) => y))];
  const sx = (x: number) => L + (x / xMax) * (W - L - R);
  const sy = (y: number) => T + (1 - (y - y0) / (y1 - y0 || 1)) * (H - T - B);
  const lines = series.map((s, i) => {
    const d = s.points.filter(([, y]) => Number.isFinite(y)).map(([x, y], j) => `${j ? 'L' : 'M'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join('');
    return `<path d="${d}" fill="none" stroke="${COLOURS[i % COLOURS.length]}" stroke-width="1.5"><title>${escapeHtml(s.name)}</title></path>`;
  });
  const legend = series.map((s, i) => `<text x="${L + 8 + i * 90}" y="${T + 12}" fill="${COLOURS[i % COLOURS.length]}" font-size="11">${escapeHtml(s.name)}</text>`);
  const axes = `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#888"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#888"/>` +
    `<text x="${L - 4}" y="${T + 4}" font-size="10" text-anchor="end">${fmt(y1)}</text><text x="${L - 4}" y="${H - B}" font-size="10" text-anchor="end">${fmt(y0)}</text>` +
    `<text x="${W - R}" y="${H - 8}" font-size="10" text-anchor="end">${xMax.toFixed(0)} s</text>`;
  return `<figure><svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${escapeHtml(title)}">` +
    `<text x="${L}" y="14" font-size="12" font-weight="bold">${escapeHtml(title)}</text>${axes}${lines.join('')}${legend.join('')}</svg></figure>`;
}

function fmt(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(2);
}

export function reportHtml(r: TrainReport): string {
  const steps = r.timeline.steps;
  const stats = r.timeline.stats;
  const stageNames = [...new Set(stats.flatMap((s) => s.stages.map((st) => st.name)))];
  const charts = [
    svgChart('training loss', [{ name: 'loss', points: steps.map((s) => [s.seconds, s.loss]) }]),
    svgChart('accuracy', [
      { name: 'train', points: steps.map((s) => [s.seconds, s.accuracy]) },
      { name: 'held-out', points: r.epochs.map((e) => [e.endedAt, e.valAccuracy]) },
    ], [0, 1]),
    svgChart('images/s', [{ name: 'images/s', points: steps.map((s) => [s.seconds, s.imagesPerSecond]) }]),
    svgChart('stage busy (per interval)', stageNames.map((name) => ({ name, points: stats.map((s) => [s.seconds, s.stages.find((x) => x.name === name)?.busy ?? NaN] as const) })), [0, 1]),
    svgChart('input queue fill (mean so far)', stageNames.map((name) => ({ name, points: stats.map((s) => [s.seconds, s.stages.find((x) => x.name === name)?.queueFill ?? NaN] as const) })), [0, 1]),
    svgChart('share of time waiting for data', [{ name: 'waited', points: steps.map((s) => [s.seconds, s.waitedForData]) }], [0, 1]),
  ];
  const rows = r.epochs.map((e) => `<tr><td>${e.epoch}</td><td>${e.trainLoss.toFixed(3)}</td><td>${(e.trainAccuracy * 100).toFixed(1)}%</td>` +
    `<td>${(e.valAccuracy * 100).toFixed(1)}%</td><td>${e.imagesPerSecond.toFixed(0)}</td><td>${e.seconds.toFixed(1)}</td></tr>`);
  const waited = ((r.waitedForDataSeconds / Math.max(r.seconds, 1e-9)) * 100).toFixed(0);
  return `<!doctype html><html><head><meta charset="utf-8"><title>Tandem training report</title>
<style>body{font:14px system-ui,sans-serif;margin:24px;max-width:1000px}figure{display:inline-block;margin:6px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}code{font-size:12px}</style></head><body>
<h1>Tandem training report</h1>
<p>${escapeHtml(r.adapter)}; decode ${escapeHtml(r.decodeMode)}; ViT ${r.model.imageSize}px, width ${r.model.width}, depth ${r.model.depth};
${r.images.train} training / ${r.images.validation} held-out images, ${r.images.classes.length} classes; ${r.steps} steps in ${r.seconds.toFixed(1)} s;
waited for data ${waited}% of the time; loader's busiest stage: ${escapeHtml(r.bottleneck ?? '?')}; ${r.failures} failed items.</p>
${charts.join('\n')}
<h2>Epochs</h2><table><tr><th>epoch</th><th>loss</th><th>train acc</th><th>held-out acc</th><th>images/s</th><th>seconds</th></tr>${rows.join('')}</table>
<h2>Loader stages</h2><p><code>${r.loaderStats ? escapeHtml(formatStats(r.loaderStats)) : ''}</code></p>
</body></html>
`;
}
