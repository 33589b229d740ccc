// Live line charts on a plain canvas. Points are appended as events arrive; drawing is coalesced
// into one requestAnimationFrame, so a burst of events costs one redraw.
import { TIME_PARTS } from '../src/pipeline/index.ts';

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf'];

export class LineChart {
  readonly #canvas: HTMLCanvasElement;
  readonly #title: string;
  readonly #yRange: [number, number] | undefined;
  readonly #series = new Map<string, number[]>(); // flat x,y pairs per series
  #scheduled = false;
  /** Points drawn by the last redraw (the e2e test checks that it grows). */
  pointsDrawn = 0;

  constructor(canvas: HTMLCanvasElement, title: string, yRange?: [number, number]) {
    this.#canvas = canvas;
    this.#title = title;
    this.#yRange = yRange;
    this.#draw();
  }

  add(series: string, x: number, y: number): void {
    if (!Number.isFinite(y)) return;
    let points = this.#series.get(series);
    if (!points) this.#series.set(series, (points = []));
    points.push(x, y);
    if (!this.#scheduled) {
      this.#scheduled = true;
      requestAnimationFrame(() => {
        this.#scheduled = false;
        this.#draw();
      });
    }
  }

  clear(): void {
    this.#series.clear();
    this.#draw();
  }

  #draw(): void {
    const ctx = this.#canvas.getContext('2d');
    if (!ctx) return;
    const { width: W, height: H } = this.#canvas;
    const L = 40,
      R = 8,
      B = 18;
    ctx.font = '11px system-ui, sans-serif';
    // The legend goes after the title and wraps onto rows above the plot, never over the lines.
    const legend = layoutLegend(ctx, [...this.#series.keys()], L + ctx.measureText(this.#title).width + 14, L, W - R);
    const T = 20 + legend.rows * 13;
    let xMax = 1e-9,
      yMax = 1e-9;
    for (const p of this.#series.values())
      for (let i = 0; i < p.length; i += 2) (xMax = Math.max(xMax, p[i]!)), (yMax = Math.max(yMax, p[i + 1]!));
    const [y0, y1] = this.#yRange ?? [0, yMax * 1.05];
    ctx.clearRect(0, 0, W, H);
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = '#222';
    ctx.textAlign = 'left';
    ctx.fillText(this.#title, L, 13);
    ctx.strokeStyle = '#999';
    ctx.beginPath();
    ctx.moveTo(L, T);
    ctx.lineTo(L, H - B);
    ctx.lineTo(W - R, H - B);
    ctx.stroke();
    ctx.textAlign = 'right';
    ctx.fillText(label(y1), L - 4, T + 4);
    ctx.fillText(label(y0), L - 4, H - B);
    ctx.fillText(`${xMax.toFixed(0)} s`, W - R, H - 4);
    ctx.textAlign = 'left';
    let drawn = 0,
      colour = 0;
    for (const [name, p] of this.#series) {
      ctx.strokeStyle = ctx.fillStyle = COLOURS[colour++ % COLOURS.length]!;
      ctx.beginPath();
      for (let i = 0; i < p.length; i += 2) {
        const x = L + (p[i]! / xMax) * (W - L - R),
          y = T + (1 - (p[i + 1]! - y0) / (y1 - y0 || 1)) * (H - T - B);
        if (i === 0) ctx.moveTo(x, y);
        else ctx.lineTo(x, y);
      }
      ctx.stroke();
      drawn += p.length / 2;
      const at = legend.at.get(name)!;
      ctx.fillText(name, at[0], at[1]);
    }
    this.pointsDrawn = drawn;
  }
}

/** Places legend labels left to right from `x`, wrapping to `left` on new rows of 13 px. */
function layoutLegend(
  ctx: CanvasRenderingContext2D,
  names: readonly string[],
  x: number,
  left: number,
  right: number,
): { at: Map<string, [number, number]>; rows: number } {
  const at = new Map<string, [number, number]>();
  let row = 0;
  for (const name of names) {
    const w = ctx.measureText(name).width;
    if (x + w > right && x > left) {
      row++;
      x = left;
    }
    at.set(name, [x, 13 + row * 13]);
    x += w + 10;
  }
  return { at, rows: row };
}

/** Where a stage's time went, as a share of each part (the four add up to 1). */
export interface SplitRow {
  name: string;
  time: { working: number; starved: number; blocked: number; resource: number };
  /** What the resource part was (the consumer's: e.g. 'GPU'). */
  resourceName?: string;
}

const PARTS = TIME_PARTS;

/** One horizontal stacked bar per stage: the latest interval's split of its time, four ways. */
export class SplitBars {
  readonly #canvas: HTMLCanvasElement;
  readonly #title: string;
  #rows: SplitRow[] = [];
  #scheduled = false;
  /** Bars drawn by the last redraw. */
  pointsDrawn = 0;

  constructor(canvas: HTMLCanvasElement, title: string) {
    this.#canvas = canvas;
    this.#title = title;
    this.#draw();
  }

  set(rows: SplitRow[]): void {
    this.#rows = rows;
    if (!this.#scheduled) {
      this.#scheduled = true;
      requestAnimationFrame(() => {
        this.#scheduled = false;
        this.#draw();
      });
    }
  }

  clear(): void {
    this.#rows = [];
    this.#draw();
  }

  #draw(): void {
    const ctx = this.#canvas.getContext('2d');
    if (!ctx) return;
    const { width: W, height: H } = this.#canvas;
    const labelW = 92,
      R = 8;
    ctx.clearRect(0, 0, W, H);
    ctx.font = '11px system-ui, sans-serif';
    ctx.textAlign = 'left';
    ctx.fillStyle = '#222';
    ctx.fillText(this.#title, 8, 13);
    // Legend: colour swatches on their own row(s) under the title.
    let x = 8,
      y = 28;
    for (const p of PARTS) {
      const w = 14 + ctx.measureText(p.label).width + 10;
      if (x + w > W - R) (x = 8), (y += 14);
      ctx.fillStyle = p.colour;
      ctx.fillRect(x, y - 9, 10, 10);
      ctx.fillStyle = '#222';
      ctx.fillText(p.label, x + 14, y);
      x += w;
    }
    const top = y + 8,
      bottom = H - 16;
    const n = Math.max(1, this.#rows.length);
    const bar = Math.max(6, Math.min(16, (bottom - top) / n - 4));
    const x0 = labelW,
      x1 = W - R;
    this.#rows.forEach((r, i) => {
      const yy = top + i * (bar + 4);
      ctx.fillStyle = '#222';
      ctx.textAlign = 'right';
      ctx.fillText(r.name, labelW - 6, yy + bar - 3);
      let xx = x0;
      for (const p of PARTS) {
        const w = Math.max(0, r.time[p.key]) * (x1 - x0);
        if (w <= 0) continue;
        ctx.fillStyle = p.colour;
        ctx.fillRect(xx, yy, w, bar);
        if (w > 30 && bar >= 12) {
          ctx.fillStyle = p.key === 'starved' ? '#222' : '#fff';
          ctx.textAlign = 'center';
          ctx.fillText(
            `${p.key === 'resource' && r.resourceName ? `${r.resourceName} ` : ''}${Math.round(r.time[p.key] * 100)}%`,
            xx + w / 2,
            yy + bar - 3,
          );
        }
        xx += w;
      }
    });
    ctx.strokeStyle = '#999';
    ctx.fillStyle = '#222';
    ctx.textAlign = 'center';
    ctx.beginPath();
    ctx.moveTo(x0, bottom);
    ctx.lineTo(x1, bottom);
    for (const t of [0, 0.25, 0.5, 0.75, 1]) {
      const tx = x0 + t * (x1 - x0);
      ctx.moveTo(tx, bottom);
      ctx.lineTo(tx, bottom + 3);
      ctx.fillText(`${t * 100}%`, Math.min(Math.max(tx, x0 + 8), x1 - 12), H - 3);
    }
    ctx.stroke();
    this.pointsDrawn = this.#rows.length;
  }
}

function label(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(2);
}

/** Watches frame pacing: the longest gap between animation frames over the recent past. */
export class FrameMeter {
  #last = 0;
  #gaps: number[] = [];
  frames = 0;

  start(onFrame: (meter: FrameMeter) => void): void {
    const tick = (t: number) => {
      if (this.#last) this.#gaps.push(t - this.#last);
      if (this.#gaps.length > 300) this.#gaps.shift();
      this.#last = t;
      this.frames++;
      onFrame(this);
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }

  /** Longest and 95th-percentile frame gap (ms) over the last ~300 frames. */
  gaps(): { max: number; p95: number } {
    if (this.#gaps.length === 0) return { max: 0, p95: 0 };
    const sorted = [...this.#gaps].sort((a, b) => a - b);
    return { max: sorted.at(-1)!, p95: sorted[Math.floor(sorted.length * 0.95)]! };
  }
}
