// Live line charts on a plain canvas. Points are appended as events arrive; drawing is coalesced
// into one requestAnimationFrame, so a burst of events costs one redraw.

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
    const L = 40, R = 8, T = 20, B = 18;
    let xMax = 1e-9, yMax = 1e-9;
    for (const p of this.#series.values()) for (let i = 0; i < p.length; i += 2) (xMax = Math.max(xMax, p[i]!)), (yMax = Math.max(yMax, p[i + 1]!));
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
    let drawn = 0, legendX = L + ctx.measureText(this.#title).width + 14, colour = 0;
    for (const [name, p] of this.#series) {
      ctx.strokeStyle = ctx.fillStyle = COLOURS[colour++ % COLOURS.length]!;
      ctx.beginPath();
      for (let i = 0; i < p.length; i += 2) {
        const x = L + (p[i]! / xMax) * (W - L - R), y = T + (1 - (p[i + 1]! - y0) / (y1 - y0 || 1)) * (H - T - B);
        if (i === 0) ctx.moveTo(x, y);
        else ctx.lineTo(x, y);
      }
      ctx.stroke();
      drawn += p.length / 2;
      ctx.fillText(name, legendX, 13);
      legendX += ctx.measureText(name).width + 10;
    }
    this.pointsDrawn = drawn;
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
