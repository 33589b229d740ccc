import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import {
  brokenInputsGetTypedErrors,
  formatsAndModes,
  jpegDecodesToPattern,
  oversubscribedPoolNeverHangs,
} from '../shared/decode-scenarios.ts';
import { fallbackBatchesStayDense, fallbackMatchesThreads } from '../shared/fallback-scenarios.ts';

// This page is cross-origin isolated, so the fallback is forced here; the demo's end-to-end test
// loads a page without isolation, where DecodePool picks it by itself.
describe('fallback decode pool: single-threaded instances in module workers (Chromium)', () => {
  let workers: DecodePool;
  let threads: DecodePool;
  beforeAll(async () => {
    workers = await DecodePool.create({ threads: 2, mode: 'workers' });
    threads = await DecodePool.create({ threads: 2 });
  });
  afterAll(async () => {
    await workers?.close();
    await threads?.close();
  });

  it('gives the same bytes as the pthreads pool (JPEG, PNG, WAV)', () => fallbackMatchesThreads(threads, workers));
  it('decodes a generated JPEG to the expected pixels', async () => {
    expect((await jpegDecodesToPattern(workers)).worst).toBeLessThanOrEqual(12);
  });
  it('decodes BMP, palette and 16-bit PNG, gray JPEG; crop and contain', () => formatsAndModes(workers));
  it('gives typed errors for broken input and stays healthy', () => brokenInputsGetTypedErrors(workers));
  it('never blocks the page while oversubscribed', async () => {
    expect((await oversubscribedPoolNeverHangs(workers)).ticks).toBeGreaterThan(0);
  });
  it('fills dense batches when items fail', () => fallbackBatchesStayDense(workers));
});
