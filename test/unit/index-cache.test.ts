// The video loader's index cache (src/video/index-cache.ts): kept by key and size, the least
// recently used evicted past the budget, an index larger than the budget never kept.
import { expect, it } from 'vitest';
import { IndexCache } from '../../src/video/index-cache.ts';
import type { Mp4Index } from '../../src/video/mp4-index.ts';

/**
 * An index of `frames` samples: 8 × 5 + 4 + 1 = 45 bytes a frame, and the 16 of the lookup its
 * clips build beside it (LOOKUP_BYTES_PER_SAMPLE), 61 in all; 256 more for the rest.
 */
function indexOf(frames: number): Mp4Index {
  const f64 = () => new Float64Array(frames);
  return {
    sampleEntry: 'avc1',
    codedWidth: 16,
    codedHeight: 16,
    durationSeconds: frames / 10,
    frameTimes: f64(),
    samples: frames,
    keyframes: 1,
    codec: 'h264',
    extradata: undefined,
    color: undefined,
    frameRate: 10,
    timescale: 1000,
    pts: f64(),
    dts: f64(),
    durations: f64(),
    offsets: f64(),
    sizes: new Uint32Array(frames),
    key: new Uint8Array(frames),
    indexBytes: 0,
  };
}

it('keeps indexes by key and size, evicts the least recently used past its budget, and never keeps one over it', () => {
  const cache = new IndexCache(3 * (100 * 61 + 256));
  const [a, b, c, d] = [indexOf(100), indexOf(100), indexOf(100), indexOf(100)];
  cache.put('a', 1, a);
  cache.put('b', 2, b);
  cache.put('c', 3, c);
  expect(cache.stats).toEqual({ indexes: 3, bytes: 3 * (100 * 61 + 256) });
  expect(cache.get('a', 1)).toBe(a); // a is now the most recently used
  cache.put('d', 4, d); // evicts b
  expect(cache.get('b', 2)).toBeUndefined();
  expect([cache.get('a', 1), cache.get('c', 3), cache.get('d', 4)]).toEqual([a, c, d]);
  // Another size under the same key: the file changed; the old index goes.
  expect(cache.get('a', 99)).toBeUndefined();
  expect(cache.get('a', 1)).toBeUndefined();
  expect(cache.stats.indexes).toBe(2);
  cache.put('big', 5, indexOf(1000));
  expect(cache.get('big', 5)).toBeUndefined();
  expect(cache.stats).toEqual({ indexes: 2, bytes: 2 * (100 * 61 + 256) });
  const none = new IndexCache(0);
  none.put('a', 1, a);
  expect(none.get('a', 1)).toBeUndefined();
});
