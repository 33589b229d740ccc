import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecodePool } from '../../src/decode/index.ts';
import { DecodePool as Pool } from '../../src/decode/index.ts';
import {
  brokenInputsGetTypedErrors,
  exifOrientationApplied,
  formatsAndModes,
  jpegDecodesToPattern,
  oversubscribedPoolNeverHangs,
  patternJpeg,
  pngDecodesExactly,
  heldBatchSurvivesMemoryGrowth,
  poolBufferHandle,
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
  it('allocate gives a handle that survives memory growth and refuses misuse', () => poolBufferHandle(pool));
  it('a batch held while the memory grows keeps its pixels', () => heldBatchSurvivesMemoryGrowth(pool));
  it('gives typed errors for broken input and stays healthy', () => brokenInputsGetTypedErrors(pool));
  it('queues more work than threads without hanging or blocking timers', async () => {
    const { ticks } = await oversubscribedPoolNeverHangs(pool);
    expect(ticks).toBeGreaterThan(0);
  });
  it('reports its mode and counts (one decode and one failure more, whatever ran before)', async () => {
    const before = pool.stats();
    const target = pool.malloc(32 * 32 * 3);
    try {
      await pool.decodeInto(patternJpeg(64, 48).bytes, target, { width: 32, height: 32 });
      await expect(pool.decodeInto(new Uint8Array([1, 2, 3]), target, { width: 32, height: 32 })).rejects.toThrow(/unknown-format/);
    } finally {
      pool.free(target);
    }
    const after = pool.stats();
    expect(after.mode).toBe('pthreads');
    expect(after.completed - before.completed).toBe(1);
    expect(after.failed - before.failed).toBe(1);
    expect(after.inFlight).toBe(0);
  });
});
