import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecodePool, memoryByteSource } from '../../src/decode/index.ts';
import { httpByteSource } from '../../src/sources/index.ts';
import {
  failingSourcesFailTheirItem,
  forgedBoxInStreamOfUnknownSize,
  LONG_VIDEOS,
  streamedMatchesWhole,
} from '../shared/stream-scenarios.ts';

// The vite dev server answers Range requests for the fixtures (made by scripts/make-fixtures.sh).
const url = (name: string) => `/test/fixtures/generated/${name}`;

describe('streamed video decoding (Chromium)', () => {
  let pool: DecodePool;
  beforeAll(async () => {
    pool = await DecodePool.create({ threads: 2 });
  });
  afterAll(async () => {
    await pool?.close();
  });

  for (const name of LONG_VIDEOS) {
    it(`${name}: from memory and over HTTP ranges, a 64 KiB window at a time, same frames as the whole file`, async () => {
      const whole = new Uint8Array(await (await fetch(url(name))).arrayBuffer());
      await streamedMatchesWhole(pool, name, whole, memoryByteSource(whole));
      const remote = await httpByteSource(new URL(url(name), location.href));
      expect(remote.size).toBe(whole.length);
      const traffic = await streamedMatchesWhole(pool, name, whole, remote);
      expect(traffic.bytes).toBeLessThan(whole.length);
    });
  }
  it('a failing or stalled source fails its item with a DecodeError, and the pool goes on', async () => {
    await failingSourcesFailTheirItem(pool, new Uint8Array(await (await fetch(url('long.h264.mp4'))).arrayBuffer()));
  });
  it('a forged box size in a stream of unknown size fails its item without a huge allocation', async () => {
    await forgedBoxInStreamOfUnknownSize(pool, new Uint8Array(await (await fetch(url('long.h264.mp4'))).arrayBuffer()));
  });
});
