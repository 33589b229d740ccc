import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { poolScenarios } from '../shared/decode-scenarios.ts';
import { encodeJpeg } from '../../src/synthetic/index.ts';
import { modeScenarios } from '../shared/fallback-scenarios.ts';

describe('fallback decode pool: single-threaded instances in workers (Node)', () => {
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

  // The unshared memory's buffer is replaced when it grows: the handle and batch scenarios cover it.
  for (const [title, body] of Object.entries(poolScenarios)) it(title, () => body(workers));
  for (const [title, body] of Object.entries(modeScenarios)) it(title, () => body(threads, workers));
  it("a Node Buffer handed to decode stays the caller's: not detached by the transfer to the worker", async () => {
    const pixels = new Uint8Array(32 * 24 * 3).map((_, i) => (i * 7) % 251);
    const jpeg = encodeJpeg(pixels, 32, 24, { quality: 90 });
    // fs.readFile's shape: a Buffer over its own ArrayBuffer, whose slice() is a view, not a copy.
    const buffer = Buffer.from(jpeg.slice().buffer);
    const before = Uint8Array.from(buffer);
    const a = await workers.decode(buffer, { width: 32, height: 24 });
    const b = await threads.decode(buffer, { width: 32, height: 24 });
    expect(buffer.buffer.byteLength).toBeGreaterThan(0);
    expect(Buffer.compare(buffer, before)).toBe(0);
    expect(Buffer.compare(a.pixels, b.pixels)).toBe(0);
  });
  it('says which mode it runs in', () => {
    expect(workers.stats().mode).toBe('workers');
    expect(threads.stats().mode).toBe('pthreads');
  });
  it('refuses work after close', async () => {
    const pool = await DecodePool.create({ threads: 1, mode: 'workers' });
    await pool.close();
    await expect(pool.decodeInto(new Uint8Array(8), 0, { width: 1, height: 1 })).rejects.toThrow(/closed/);
  });
});
