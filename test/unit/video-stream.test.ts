import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodePool, fileByteSource, memoryByteSource } from '../../src/decode/index.ts';
import { httpByteSource } from '../../src/sources/index.ts';
import {
  answerRange,
  failingSourcesFailTheirItem,
  forgedBoxInStreamOfUnknownSize,
  LONG_VIDEOS,
  streamedMatchesWhole,
} from '../shared/stream-scenarios.ts';

// Node tier of streamed video decoding: the same scenarios as Deno and Chromium, from memory, a
// local file and HTTP ranges on 127.0.0.1.
const path = (name: string) => fileURLToPath(new URL(`../fixtures/generated/${name}`, import.meta.url));

/** Serves the fixtures with HEAD and single byte ranges. */
function rangeServer(): Promise<Server> {
  const server = createServer((req, res) => {
    readFile(path((req.url ?? '/').slice(1))).then(
      (bytes) => {
        const answer = answerRange(new Uint8Array(bytes), req.method ?? 'GET', req.headers.range);
        res.writeHead(answer.status, answer.headers).end(answer.body);
      },
      () => res.writeHead(404).end(),
    );
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('streamed video decoding (Node)', () => {
  let pool: DecodePool;
  let server: Server;
  beforeAll(async () => {
    pool = await DecodePool.create({ threads: 2 });
    server = await rangeServer();
  });
  afterAll(async () => {
    await pool?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  for (const name of LONG_VIDEOS) {
    it(`${name}: streamed from memory, a local file and HTTP ranges, same frames as the whole file`, { timeout: 120_000 }, async () => {
      const whole = new Uint8Array(await readFile(path(name)));
      await streamedMatchesWhole(pool, name, whole, memoryByteSource(whole));
      const file = await fileByteSource(path(name));
      try {
        await streamedMatchesWhole(pool, name, whole, file);
      } finally {
        await file.close();
      }
      const { port } = server.address() as AddressInfo;
      const traffic = await streamedMatchesWhole(pool, name, whole, await httpByteSource(`http://127.0.0.1:${port}/${name}`));
      expect(traffic.bytes).toBeLessThan(whole.length); // seeking skips most of the file
    });
  }

  it('a failing or stalled source fails its item, the pool goes on', { timeout: 120_000 }, async () => {
    await failingSourcesFailTheirItem(pool, new Uint8Array(await readFile(path('long.h264.mp4'))));
    expect(pool.stats().inFlight).toBe(0);
  });

  it('a forged box size in a stream of unknown size fails its item without a huge allocation', { timeout: 120_000 }, async () => {
    await forgedBoxInStreamOfUnknownSize(pool, new Uint8Array(await readFile(path('long.h264.mp4'))));
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
