// The clip samplers checked against their definitions (src/video/samplers.ts, docs/video.md): index
// mode by arithmetic on frame numbers, time mode against a plain linear scan of the frame table.
import { describe, expect, it } from 'vitest';
import { OptionError, TandemError } from '../../src/errors/index.ts';
import { ClipSamplingError } from '../../src/video/errors.ts';
import {
  type ClipSampler,
  type ClipShape,
  type PastEndPolicy,
  SAMPLE_TIME_TOLERANCE,
  type SampledClip,
  sampleClips,
} from '../../src/video/samplers.ts';

const draw = { seed: 7, epoch: 0, key: 'video-0' };
const constantRate = (n: number, fps: number, start = 0) => ({
  frameTimes: Float64Array.from({ length: n }, (_, i) => start + i / fps),
  durationSeconds: Number.NaN,
});
/** 20/60 ms gaps alternating for 40 frames, then 100 ms gaps: both kinds of variable rate. */
const vfr = () => {
  const times = [0];
  for (let i = 1; i < 70; i++) times.push(times[i - 1]! + (i <= 40 ? (i % 2 ? 0.02 : 0.06) : 0.1));
  return { frameTimes: Float64Array.from(times), durationSeconds: Number.NaN };
};
/** The frame shown at t, by definition: the last whose pts ≤ t (the first before any). */
const shownAt = (times: Float64Array, t: number): number => {
  let shown = 0;
  for (let i = 0; i < times.length; i++) if (times[i]! <= t + SAMPLE_TIME_TOLERANCE) shown = i;
  return shown;
};
const indices = (clips: SampledClip[]) => clips.map((c) => [...c.frameIndices]);
const run = (n: number, shape: ClipShape, sampler: ClipSampler, policy?: PastEndPolicy, d = draw) =>
  sampleClips(constantRate(n, 10), shape, sampler, d, policy);

describe('index mode', () => {
  it('random: counts, stride spacing and starts within 0 … n − span', () => {
    for (const [n, frames, stride] of [
      [100, 8, 1],
      [100, 8, 3],
      [30, 16, 1],
      [57, 5, 13],
      [9, 9, 1],
    ] as const) {
      const span = (frames - 1) * stride + 1;
      for (let k = 0; k < 20; k++) {
        const clips = run(n, { framesPerClip: frames, stride }, { kind: 'random', clips: 6 }, 'error', { ...draw, key: `v${k}` });
        expect(clips).toHaveLength(6);
        clips.forEach((c, i) => {
          expect(c.clipIndex).toBe(i);
          expect(c.validSlots).toBe(frames);
          const s = c.frameIndices[0]!;
          expect(s).toBeGreaterThanOrEqual(0);
          expect(s).toBeLessThanOrEqual(n - span);
          expect([...c.frameIndices]).toEqual(Array.from({ length: frames }, (_, j) => s + j * stride));
          expect(c.sampleTimes).toBe(c.frameTimes);
          expect(c.startSeconds).toBeCloseTo(s / 10, 12);
          expect(c.endSeconds).toBeCloseTo((s + span - 1) / 10, 12);
        });
        const starts = clips.map((c) => c.frameIndices[0]!);
        expect(starts).toEqual([...starts].sort((a, b) => a - b));
      }
    }
  });

  it('uniform: first start 0, last at n − span, evenly spaced within one frame', () => {
    for (const [n, frames, stride, count] of [
      [100, 8, 1, 5],
      [101, 4, 2, 7],
      [50, 10, 1, 40],
      [20, 20, 1, 3],
    ] as const) {
      const lastStart = n - ((frames - 1) * stride + 1);
      const starts = run(n, { framesPerClip: frames, stride }, { kind: 'uniform', clips: count }).map((c) => c.frameIndices[0]!);
      expect(starts).toHaveLength(count);
      expect(starts[0]).toBe(0);
      expect(starts.at(-1)).toBe(lastStart);
      const gap = lastStart / (count - 1);
      for (let k = 1; k < count; k++) expect(Math.abs(starts[k]! - starts[k - 1]! - gap)).toBeLessThanOrEqual(1);
    }
    expect(indices(run(10, { framesPerClip: 3 }, { kind: 'uniform', clips: 1 }))).toEqual([[0, 1, 2]]);
  });

  it('ignores time: a variable-rate table gives the same indices as a constant one', () => {
    const shape = { framesPerClip: 6, stride: 2 };
    const sampler = { kind: 'random', clips: 5 } as const;
    const a = sampleClips(vfr(), shape, sampler, draw);
    const b = sampleClips(constantRate(70, 25), shape, sampler, draw);
    expect(indices(a)).toEqual(indices(b));
    for (const c of a) expect([...c.frameTimes]).toEqual([...c.frameIndices].map((i) => vfr().frameTimes[i]));
  });
});

describe('time mode', () => {
  it('samples 1/fps apart, each the frame shown at its time (constant rate, offset start)', () => {
    const timeline = constantRate(90, 30, 0.5);
    for (const fps of [30, 7, 12.5]) {
      for (const c of sampleClips(timeline, { framesPerClip: 8, fps }, { kind: 'random', clips: 10 }, draw, 'error')) {
        const s = c.sampleTimes[0]!;
        expect(s).toBeGreaterThanOrEqual(0.5);
        expect(s).toBeLessThanOrEqual(0.5 + 89 / 30 - 7 / fps + 1e-9);
        for (let j = 0; j < 8; j++) {
          expect(c.sampleTimes[j]).toBeCloseTo(s + j / fps, 9);
          expect(c.frameIndices[j]).toBe(shownAt(timeline.frameTimes, c.sampleTimes[j]!));
          expect(c.frameTimes[j]).toBe(timeline.frameTimes[c.frameIndices[j]!]);
        }
      }
    }
    // On the frame grid itself, each sample is its own frame despite rounding (0.5 + j/30).
    const [grid] = sampleClips(timeline, { framesPerClip: 90, fps: 30 }, { kind: 'uniform', clips: 1 }, draw, 'error');
    expect([...grid!.frameIndices]).toEqual(Array.from({ length: 90 }, (_, i) => i));
  });

  it('variable frame rate: every sample picks the frame shown at that time', () => {
    const timeline = vfr();
    let distinct = 0;
    for (let k = 0; k < 200; k++) {
      for (const c of sampleClips(timeline, { framesPerClip: 10, fps: 16 }, { kind: 'random', clips: 2 }, { ...draw, key: `k${k}` })) {
        for (let j = 0; j < 10; j++) expect(c.frameIndices[j]).toBe(shownAt(timeline.frameTimes, c.sampleTimes[j]!));
        distinct += new Set(c.frameIndices).size;
      }
    }
    // At 16 fps samples are 62.5 ms apart: in the 20/60 ms stretch they skip frames unevenly, in the 100 ms one they repeat.
    expect(distinct / 400).toBeGreaterThan(6);
    expect(distinct / 400).toBeLessThan(10);
    const all = sampleClips(timeline, { framesPerClip: 4, fps: 16 }, { kind: 'all' }, draw);
    for (const c of all) for (let j = 0; j < 4; j++) expect(c.frameIndices[j]).toBe(shownAt(timeline.frameTimes, c.sampleTimes[j]!));
  });

  it('a known duration extends the video past the last pts; uniform ends the last clip there', () => {
    const times = constantRate(20, 10).frameTimes; // last pts 1.9
    const ends = (durationSeconds: number) =>
      sampleClips({ frameTimes: times, durationSeconds }, { framesPerClip: 5, fps: 10 }, { kind: 'uniform', clips: 3 }, draw).map(
        (c) => c.sampleTimes[0]!,
      );
    expect(ends(Number.NaN)).toEqual([0, 0.75, 1.5].map((t) => expect.closeTo(t, 12)));
    expect(ends(2)).toEqual([0, 0.8, 1.6].map((t) => expect.closeTo(t, 12)));
    expect(ends(1)).toEqual(ends(Number.NaN)); // a duration before the last pts is not believed
  });
});

describe('seeding', () => {
  const starts = (d: typeof draw, fps?: number) =>
    sampleClips(constantRate(200, 10), fps ? { framesPerClip: 8, fps } : { framesPerClip: 8 }, { kind: 'random', clips: 4 }, d).map(
      (c) => c.sampleTimes[0],
    );
  it('the same (seed, epoch, key) draws the same clips; another epoch, key or seed draws anew', () => {
    let sameEpoch = 0,
      sameKey = 0,
      sameSeed = 0;
    for (let k = 0; k < 200; k++) {
      const d = { seed: 3, epoch: 1, key: `clip/${k}.mp4` };
      expect(starts(d)).toEqual(starts({ ...d }));
      expect(starts(d, 10)).toEqual(starts({ ...d }, 10));
      if (JSON.stringify(starts(d)) === JSON.stringify(starts({ ...d, epoch: 2 }))) sameEpoch++;
      if (JSON.stringify(starts(d)) === JSON.stringify(starts({ ...d, key: `clip/${k}.webm` }))) sameKey++;
      if (JSON.stringify(starts(d)) === JSON.stringify(starts({ ...d, seed: 4 }))) sameSeed++;
    }
    expect([sameEpoch, sameKey, sameSeed]).toEqual([0, 0, 0]);
  });

  it('random starts cover the valid range about uniformly (index and time mode)', () => {
    // 100 frames, 10 per clip: starts 0 … 90 (91 values); 7 bins of 13 starts each.
    const bins = new Array(7).fill(0),
      timeBins = new Array(9).fill(0);
    const keys = 14000;
    for (let k = 0; k < keys; k++) {
      const d = { seed: 11, epoch: 0, key: `item-${k}` };
      const [c] = sampleClips(constantRate(100, 10), { framesPerClip: 10 }, { kind: 'random', clips: 1 }, d);
      bins[Math.floor(c!.frameIndices[0]! / 13)]++;
      // Time mode: last pts 9.9 s, span 0.9 s, so starts lie in [0, 9): 9 bins of 1 s.
      const [t] = sampleClips(constantRate(100, 10), { framesPerClip: 10, fps: 10 }, { kind: 'random', clips: 1 }, d);
      timeBins[Math.floor(t!.sampleTimes[0]!)]++;
    }
    for (const b of bins) expect(Math.abs(b - keys / 7)).toBeLessThan(0.08 * (keys / 7));
    for (const b of timeBins) expect(Math.abs(b - keys / 9)).toBeLessThan(0.08 * (keys / 9));
    expect(timeBins.reduce((a, b) => a + b)).toBe(keys);
    expect(bins.reduce((a, b) => a + b)).toBe(keys);
  });
});

describe('past the end and short videos', () => {
  it("'repeat-last' holds the last frame; 'wrap' starts the clip's own slots over; 'error' is a typed error", () => {
    const short = (policy: PastEndPolicy, stride = 1) => run(5, { framesPerClip: 8, stride }, { kind: 'random', clips: 2 }, policy);
    expect(indices(short('repeat-last'))).toEqual([
      [0, 1, 2, 3, 4, 4, 4, 4],
      [0, 1, 2, 3, 4, 4, 4, 4],
    ]);
    expect(short('repeat-last')[0]!.validSlots).toBe(5);
    expect(indices(short('wrap'))[0]).toEqual([0, 1, 2, 3, 4, 0, 1, 2]);
    expect(indices(short('wrap', 2))[0]).toEqual([0, 2, 4, 0, 2, 4, 0, 2]);
    expect(indices(short('repeat-last', 2))[0]).toEqual([0, 2, 4, 4, 4, 4, 4, 4]);
    expect(sampleClips(constantRate(5, 10), { framesPerClip: 8 }, { kind: 'uniform', clips: 1 }, draw).map((c) => c.validSlots)).toEqual([
      5,
    ]);
    const error = (() => {
      try {
        short('error');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ClipSamplingError);
    expect(error).toBeInstanceOf(TandemError);
    expect((error as ClipSamplingError).code).toBe('video-too-short');
    // A clip of exactly the video's length is not short.
    expect(indices(run(8, { framesPerClip: 8 }, { kind: 'random', clips: 1 }, 'error'))).toEqual([[0, 1, 2, 3, 4, 5, 6, 7]]);
  });

  it('time mode: slots past the end keep their sample times under repeat-last, wrap them under wrap', () => {
    const timeline = constantRate(6, 10); // pts 0 … 0.5
    const [last] = sampleClips(timeline, { framesPerClip: 8, fps: 20 }, { kind: 'uniform', clips: 1 }, draw, 'repeat-last');
    expect(last!.validSlots).toBe(8); // 0 … 0.35 s: inside
    const [rep] = sampleClips(timeline, { framesPerClip: 8, fps: 5 }, { kind: 'uniform', clips: 1 }, draw, 'repeat-last');
    expect(rep!.validSlots).toBe(3); // 0, 0.2, 0.4 inside; 0.6 … past 0.5
    expect([...rep!.frameIndices]).toEqual([0, 2, 4, 5, 5, 5, 5, 5]);
    expect(rep!.sampleTimes[7]).toBeCloseTo(1.4, 12);
    expect(rep!.endSeconds).toBeCloseTo(0.4, 12);
    const [wrap] = sampleClips(timeline, { framesPerClip: 8, fps: 5 }, { kind: 'uniform', clips: 1 }, draw, 'wrap');
    expect([...wrap!.frameIndices]).toEqual([0, 2, 4, 0, 2, 4, 0, 2]);
    expect(wrap!.sampleTimes[3]).toBe(0);
    expect(() => sampleClips(timeline, { framesPerClip: 8, fps: 5 }, { kind: 'all' }, draw, 'error')).toThrow(ClipSamplingError);
  });

  it("'all' covers every frame once with hop = span, no clip twice; the tail follows the policy", () => {
    for (const n of [40, 43, 47, 8, 3]) {
      for (const policy of ['repeat-last', 'wrap', 'error'] as const) {
        if (policy === 'error' && n < 8) continue;
        const clips = run(n, { framesPerClip: 8 }, { kind: 'all' }, policy);
        const seen = new Array(n).fill(0);
        for (const c of clips) for (let j = 0; j < c.validSlots; j++) seen[c.frameIndices[j]!]++;
        const covered = policy === 'error' ? Math.floor(n / 8) * 8 : n;
        expect(seen).toEqual(Array.from({ length: n }, (_, i) => (i < covered ? 1 : 0)));
        expect(new Set(clips.map((c) => c.frameIndices.join())).size).toBe(clips.length);
        expect(clips.map((c) => c.frameIndices[0])).toEqual(Array.from({ length: clips.length }, (_, k) => 8 * k));
      }
    }
    // Overlapping hops: starts 0, 3, 6, … up to the last fitting start (24), then one tail clip (27) past the end.
    const overlap = run(30, { framesPerClip: 6 }, { kind: 'all', hop: 3 });
    expect(overlap.map((c) => c.frameIndices[0])).toEqual([0, 3, 6, 9, 12, 15, 18, 21, 24]);
    expect(run(31, { framesPerClip: 6 }, { kind: 'all', hop: 3 }).map((c) => c.frameIndices[0])).toEqual([
      0, 3, 6, 9, 12, 15, 18, 21, 24, 27,
    ]);
    // Stride 2: default hop is 8 × 2, so the clips' samples continue one even grid: 0, 2, 4, … 30.
    const strided = run(32, { framesPerClip: 8, stride: 2 }, { kind: 'all' });
    expect(strided.flatMap((c) => [...c.frameIndices])).toEqual(Array.from({ length: 16 }, (_, i) => 2 * i));
    // Time mode: 2 s at 10 fps, clips of 5 samples at 5 fps (1 s each): starts 0 and 1, the second running past 1.9.
    const timed = sampleClips(constantRate(20, 10), { framesPerClip: 5, fps: 5 }, { kind: 'all' }, draw);
    expect(timed.map((c) => [...c.frameIndices])).toEqual([
      [0, 2, 4, 6, 8],
      [10, 12, 14, 16, 18],
    ]);
  });
});

describe('bad input', () => {
  const timeline = constantRate(50, 10);
  const codeOf = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return e instanceof OptionError ? `option:${e.field}` : e instanceof ClipSamplingError ? e.code : String(e);
    }
    return 'no error';
  };
  it('an empty or broken timeline is a ClipSamplingError of its own code', () => {
    const s = { kind: 'random', clips: 1 } as const;
    expect(codeOf(() => sampleClips({ frameTimes: new Float64Array(0), durationSeconds: 1 }, { framesPerClip: 1 }, s, draw))).toBe(
      'empty-timeline',
    );
    expect(
      codeOf(() => sampleClips({ frameTimes: Float64Array.of(0, 0.2, 0.1), durationSeconds: Number.NaN }, { framesPerClip: 1 }, s, draw)),
    ).toBe('bad-timeline');
    expect(
      codeOf(() => sampleClips({ frameTimes: Float64Array.of(0, Number.NaN), durationSeconds: Number.NaN }, { framesPerClip: 1 }, s, draw)),
    ).toBe('bad-timeline');
    expect(codeOf(() => sampleClips({ frameTimes: Float64Array.of(0), durationSeconds: -1 }, { framesPerClip: 1 }, s, draw))).toBe(
      'bad-timeline',
    );
    expect(codeOf(() => sampleClips(constantRate(2_000_000, 100), { framesPerClip: 4 }, { kind: 'all', hop: 1 }, draw))).toBe(
      'too-many-clips',
    );
  });
  it('bad options are OptionErrors naming the field, before any work', () => {
    const r = { kind: 'random', clips: 2 } as const;
    const bad: [string, () => unknown][] = [
      ['option:framesPerClip', () => sampleClips(timeline, { framesPerClip: 0 }, r, draw)],
      ['option:framesPerClip', () => sampleClips(timeline, { framesPerClip: 1.5 }, r, draw)],
      ['option:framesPerClip', () => sampleClips(timeline, { framesPerClip: 65537 }, r, draw)],
      ['option:stride', () => sampleClips(timeline, { framesPerClip: 2, stride: 0 }, r, draw)],
      ['option:fps', () => sampleClips(timeline, { framesPerClip: 2, fps: 0 }, r, draw)],
      ['option:fps', () => sampleClips(timeline, { framesPerClip: 2, fps: Number.NaN }, r, draw)],
      ['option:fps', () => sampleClips(timeline, { framesPerClip: 2, fps: 10, stride: 1 }, r, draw)],
      ['option:clips', () => sampleClips(timeline, { framesPerClip: 2 }, { kind: 'random', clips: 0 }, draw)],
      ['option:clips', () => sampleClips(timeline, { framesPerClip: 65536 }, { kind: 'uniform', clips: 65536 }, draw)],
      ['option:kind', () => sampleClips(timeline, { framesPerClip: 2 }, { kind: 'sliding' } as unknown as ClipSampler, draw)],
      ['option:hop', () => sampleClips(timeline, { framesPerClip: 2 }, { kind: 'all', hop: 0 }, draw)],
      ['option:hop', () => sampleClips(timeline, { framesPerClip: 2 }, { kind: 'all', hop: 1.5 }, draw)],
      [
        'option:hop',
        () => sampleClips(timeline, { framesPerClip: 2 }, { kind: 'random', clips: 1, hop: 2 } as unknown as ClipSampler, draw),
      ],
      ['option:frames', () => sampleClips(timeline, { framesPerClip: 2, frames: 3 } as unknown as ClipShape, r, draw)],
      ['option:epoch', () => sampleClips(timeline, { framesPerClip: 2 }, r, { ...draw, epoch: -1 })],
      ['option:key', () => sampleClips(timeline, { framesPerClip: 2 }, r, { ...draw, key: 3 as unknown as string })],
      ['option:policy', () => sampleClips(timeline, { framesPerClip: 2 }, r, draw, 'pad' as PastEndPolicy)],
    ];
    for (const [code, f] of bad) expect(codeOf(f)).toBe(code);
    expect(codeOf(() => sampleClips(timeline, { framesPerClip: 2, fps: 10 }, { kind: 'all', hop: 0.25 }, draw))).toBe('no error');
  });
});
