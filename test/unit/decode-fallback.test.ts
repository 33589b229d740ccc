import { describe, expect, it } from 'vitest';
import { DecodePool } from '../../src/decode/index.ts';
import { encodeJpeg } from '../../src/synthetic/index.ts';
import { fallbackSuite } from '../shared/fallback-suite.ts';

describe('fallback decode pool: single-threaded instances in workers (Node)', () => {
  // The unshared memory's buffer is replaced when it grows: the handle and batch scenarios cover it.
  const pools = fallbackSuite();
  it("a Node Buffer handed to decode stays the caller's: not detached by the transfer to the worker", async () => {
    const { workers, threads } = pools();
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
    const { workers, threads } = pools();
    expect(workers.stats().mode).toBe('workers');
    expect(threads.stats().mode).toBe('pthreads');
  });
  it('refuses work after close', async () => {
    const pool = await DecodePool.create({ threads: 1, mode: 'workers' });
    await pool.close();
    await expect(pool.decodeInto(new Uint8Array(8), 0, { width: 1, height: 1 })).rejects.toThrow(/closed/);
  });
});
