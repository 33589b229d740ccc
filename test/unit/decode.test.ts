import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecodePool } from '../../src/decode/index.ts';
import { DecodePool as Pool } from '../../src/decode/index.ts';
import {
  brokenInputsGetTypedErrors, exifOrientationApplied, formatsAndModes, jpegDecodesToPattern, oversubscribedPoolNeverHangs, pngDecodesExactly,
} from '../shared/decode-scenarios.ts';

describe('wasm decode pool (Node)', () => {
  let pool: DecodePool;
  beforeAll(async () => {
    pool = await Pool.create({ threads: 2, maxInFlight: 4 });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('decodes a generated JPEG on a pthread to the expected pixels', async () => {
    const cmp = await jpegDecodesToPattern(pool);
    expect(cmp.worst).toBeLessThanOrEqual(12);
  });
  it('applies every EXIF orientation', () => exifOrientationApplied(pool));
  it('decodes BMP, palette and 16-bit PNG, gray JPEG; crop and contain', () => formatsAndModes(pool));
  it('decodes PNG losslessly to RGBA', () => pngDecodesExactly(pool));
  it('gives typed errors for broken input and stays healthy', () => brokenInputsGetTypedErrors(pool));
  it('queues more work than threads without hanging or blocking timers', async () => {
    const { ticks } = await oversubscribedPoolNeverHangs(pool);
    expect(ticks).toBeGreaterThan(0);
  });
  it('reports its mode and counts', () => {
    const stats = pool.stats();
    expect(stats.mode).toBe('pthreads');
    expect(stats.completed).toBeGreaterThan(0);
    expect(stats.failed).toBeGreaterThan(0);
  });
});
