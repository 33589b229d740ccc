import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import {
  brokenInputsGetTypedErrors,
  exifOrientationApplied,
  formatsAndModes,
  jpegDecodesToPattern,
  oversubscribedPoolNeverHangs,
  pngDecodesExactly,
  poolBufferHandle,
} from '../shared/decode-scenarios.ts';

describe('wasm decode pool (Chromium, cross-origin isolated)', () => {
  let pool: DecodePool;
  beforeAll(async () => {
    pool = await DecodePool.create({ threads: 2 });
  });
  afterAll(async () => {
    await pool?.close();
  });

  it('decodes a generated JPEG on a pthread to the expected pixels', async () => {
    expect((await jpegDecodesToPattern(pool)).worst).toBeLessThanOrEqual(12);
  });
  it('applies every EXIF orientation', () => exifOrientationApplied(pool));
  it('decodes BMP, palette and 16-bit PNG, gray JPEG; crop and contain', () => formatsAndModes(pool));
  it('decodes PNG losslessly', () => pngDecodesExactly(pool));
  it('allocate gives a handle that survives memory growth and refuses misuse', () => poolBufferHandle(pool));
  it('gives typed errors for broken input and stays healthy', () => brokenInputsGetTypedErrors(pool));
  it('never blocks the page while oversubscribed', async () => {
    expect((await oversubscribedPoolNeverHangs(pool)).ticks).toBeGreaterThan(0);
  });
});
