// The moving-shapes videos: the same bytes every time, balanced labels, and pixels that really move
// the way the label says. The motion is measured from the frames themselves: the shape is the set of
// pixels whose brightness (max channel) stands far from the frame's median, which the generator's
// value contrast (≥ 0.3, about 76 levels) guarantees over its texture and noise (about ±25).
import { describe, expect, it } from 'vitest';
import { MOTION_NAMES, motionLabelFor, movingFrame, renderMovingDataset, renderMovingSample } from '../../src/synthetic/index.ts';
import type { MovingSample } from '../../src/synthetic/index.ts';

const fnv1a = (bytes: Uint8Array): string => {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193);
  return (h >>> 0).toString(16);
};
const wrapped = (d: number, size: number) => d - size * Math.round(d / size);

/** Centre of the shape's pixels in frame k, as means on the torus (the shape may straddle an edge). */
function shapeCentroid(sample: MovingSample, k: number): [number, number] {
  const { width: w, height: h } = sample;
  const frame = movingFrame(sample, k);
  const value = new Float64Array(w * h);
  for (let p = 0; p < w * h; p++) value[p] = Math.max(frame[3 * p]!, frame[3 * p + 1]!, frame[3 * p + 2]!);
  const median = [...value].sort((a, b) => a - b)[(w * h) >> 1]!;
  let extreme = 0;
  for (const v of value) if (Math.abs(v - median) > Math.abs(extreme)) extreme = v - median;
  const sign = Math.sign(extreme);
  let cx = 0,
    sx = 0,
    cy = 0,
    sy = 0,
    count = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (sign * (value[y * w + x]! - median) <= 38) continue;
      cx += Math.cos((2 * Math.PI * x) / w);
      sx += Math.sin((2 * Math.PI * x) / w);
      cy += Math.cos((2 * Math.PI * y) / h);
      sy += Math.sin((2 * Math.PI * y) / h);
      count++;
    }
  }
  expect(count).toBeGreaterThan(10);
  const angle = (s: number, c: number, size: number) => ((Math.atan2(s, c) / (2 * Math.PI)) * size + size) % size;
  return [angle(sx, cx, w), angle(sy, cy, h)];
}

describe('moving shapes', () => {
  it('renders the same bytes every time (pinned hashes)', () => {
    const a = renderMovingSample(1, 0);
    expect(Buffer.from(a.rgb).equals(Buffer.from(renderMovingSample(1, 0).rgb))).toBe(true);
    expect([a.width, a.height, a.frames, a.rgb.length]).toEqual([64, 64, 16, 64 * 64 * 3 * 16]);
    expect(fnv1a(a.rgb)).toBe('8b01dca4');
    expect(fnv1a(renderMovingSample(5, 3, { width: 32, height: 24, frames: 4 }).rgb)).toBe('f2ca350d');
    expect(fnv1a(renderMovingSample(1, 1).rgb)).not.toBe(fnv1a(a.rgb));
    expect(fnv1a(renderMovingSample(2, 0).rgb)).not.toBe(fnv1a(a.rgb));
  });

  it('balances the four classes over any prefix', () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 400; i++) {
      const label = motionLabelFor(9, i);
      counts[label]!++;
      expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    }
    expect(counts).toEqual([100, 100, 100, 100]);
    expect(MOTION_NAMES).toEqual(['right', 'left', 'down', 'up']);
  });

  it('moves the shape in its class direction, frame to frame, at its speed', () => {
    for (const s of renderMovingDataset(4, 40)) {
      const [dx, dy] = (
        [
          [1, 0],
          [-1, 0],
          [0, 1],
          [0, -1],
        ] as const
      )[s.label as 0 | 1 | 2 | 3];
      expect(s.className).toBe(MOTION_NAMES[s.label]);
      expect(s.speed).toBeGreaterThanOrEqual(1);
      expect(s.speed).toBeLessThanOrEqual(3);
      let along = 0,
        across = 0;
      let previous = shapeCentroid(s, 0);
      for (let k = 1; k < s.frames; k++) {
        const next = shapeCentroid(s, k);
        const mx = wrapped(next[0] - previous[0], s.width),
          my = wrapped(next[1] - previous[1], s.height);
        along += mx * dx + my * dy;
        across += Math.abs(mx * dy - my * dx);
        // The stated track moves the same way.
        expect(wrapped(s.centres[2 * k]! - s.centres[2 * k - 2]!, s.width)).toBeCloseTo(dx * s.speed, 9);
        expect(wrapped(s.centres[2 * k + 1]! - s.centres[2 * k - 1]!, s.height)).toBeCloseTo(dy * s.speed, 9);
        previous = next;
      }
      expect(along / (s.frames - 1)).toBeCloseTo(s.speed, 0);
      expect(across / (s.frames - 1)).toBeLessThan(0.5);
    }
  });

  it('puts the shape anywhere in any frame whatever the class: one frame tells nothing', () => {
    // Mean position per class, first and last frame: near the picture's centre for every class
    // (motion that stopped at the edges would shift the first frames of "right" to the left).
    const sums = MOTION_NAMES.map(() => [0, 0, 0, 0, 0]);
    for (const s of renderMovingDataset(6, 800, { frames: 8 })) {
      const row = sums[s.label]!;
      row[0]! += s.centres[0]!;
      row[1]! += s.centres[1]!;
      row[2]! += s.centres[14]!;
      row[3]! += s.centres[15]!;
      row[4]!++;
    }
    for (const [x0, y0, x1, y1, n] of sums) for (const m of [x0!, y0!, x1!, y1!]) expect(Math.abs(m / n! - 32)).toBeLessThan(4);
  });

  it('rejects sizes it cannot draw', () => {
    expect(() => renderMovingSample(1, 0, { width: 8 })).toThrow(RangeError);
    expect(() => renderMovingSample(1, 0, { frames: 1 })).toThrow(RangeError);
    expect(() => renderMovingSample(1, 0, { width: 4096, height: 4096, frames: 100 })).toThrow(RangeError);
  });
});
