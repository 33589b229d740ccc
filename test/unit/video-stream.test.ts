import { describe, expect, it } from 'vitest';
import { DecodePool, memoryByteSource } from '../../src/decode/index.ts';

// Streamed decoding is tested in Deno (test/deno/video-stream.test.ts) and Chromium
// (test/browser/video-stream.test.ts); under Node it is refused with a clear error, because a pool
// thread that waits for the event loop goes wrong there (see poolThreadsCanWaitForInput).
describe('streamed video decoding (Node)', () => {
  for (const mode of ['pthreads', 'workers'] as const) {
    it(`refuses streams with a clear error instead of decoding wrongly (${mode})`, async () => {
      const pool = await DecodePool.create({ threads: 1, mode });
      try {
        await expect(pool.decodeVideoStream(memoryByteSource(new Uint8Array(10)), 0, { width: 8, height: 8, frames: { indices: [0] } }))
          .rejects.toThrow(/streamed decoding/);
        expect(pool.stats().inFlight).toBe(0);
      } finally {
        await pool.close();
      }
    });
  }
});
