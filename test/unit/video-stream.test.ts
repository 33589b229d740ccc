import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodePool, memoryByteSource } from '../../src/decode/index.ts';
import { fixturePath as path, loadFixture } from '../shared/node-fixtures.ts';
import { serveOnNode } from '../shared/node-serve.ts';
import * as stream from '../shared/stream-scenarios.ts';
import { usePool } from '../shared/use-pool.ts';

// Node tier of streamed video decoding: the same scenarios as Deno and Chromium, from memory, a
// local file and HTTP ranges on 127.0.0.1 (the fixtures with HEAD and single byte ranges).

describe('streamed video decoding (Node)', () => {
  const pool = usePool({ threads: 2 });
  let server: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    server = await serveOnNode(stream.rangeHandler(loadFixture));
  });
  afterAll(async () => {
    await server?.close();
  });

  for (const name of stream.LONG_VIDEOS) {
    it(`${name}: streamed from memory, a local file and HTTP ranges, same frames as the whole file`, { timeout: 120_000 }, async () => {
      // Seeking over HTTP skips most of the file.
      await stream.everySourceMatchesWhole(pool(), name, await loadFixture(name), path(name), `${server.url}/${name}`);
    });
  }

  it('a failing or stalled source fails its item, the pool goes on', { timeout: 120_000 }, async () => {
    await stream.failingSourcesFailTheirItem(pool(), await loadFixture('long.h264.mp4'));
    expect(pool().stats().inFlight).toBe(0);
  });

  it('a forged box size in a stream of unknown size fails its item without a huge allocation', { timeout: 120_000 }, async () => {
    await stream.forgedBoxInStreamOfUnknownSize(pool(), await loadFixture('long.h264.mp4'));
  });

  it('the workers fallback refuses streams with a clear error', async () => {
    const fallback = await DecodePool.create({ threads: 1, mode: 'workers' });
    try {
      await expect(
        fallback.decodeVideoStream(memoryByteSource(new Uint8Array(10)), 0, { width: 8, height: 8, frames: { indices: [0] } }),
      ).rejects.toThrow(/pthreads mode/);
    } finally {
      await fallback.close();
    }
  });
});
