import { describe, expect, it } from 'vitest';
import { memoryByteSource } from '../../src/decode/index.ts';
import { httpByteSource } from '../../src/sources/index.ts';
import { fixtureUrl as url } from '../shared/browser-fixtures.ts';
import * as stream from '../shared/stream-scenarios.ts';
import { usePool } from '../shared/use-pool.ts';

// The vite dev server answers Range requests for the fixtures (made by scripts/make-fixtures.sh).

describe('streamed video decoding (Chromium)', () => {
  const pool = usePool({ threads: 2 });

  for (const name of stream.LONG_VIDEOS) {
    it(`${name}: from memory and over HTTP ranges, a 64 KiB window at a time, same frames as the whole file`, async () => {
      const whole = new Uint8Array(await (await fetch(url(name))).arrayBuffer());
      await stream.streamedMatchesWhole(pool(), name, whole, memoryByteSource(whole));
      const remote = await httpByteSource(new URL(url(name), location.href));
      expect(remote.size).toBe(whole.length);
      const traffic = await stream.streamedMatchesWhole(pool(), name, whole, remote);
      expect(traffic.bytes).toBeLessThan(whole.length);
    });
  }
  it('a failing or stalled source fails its item with a DecodeError, and the pool goes on', async () => {
    await stream.failingSourcesFailTheirItem(pool(), new Uint8Array(await (await fetch(url('long.h264.mp4'))).arrayBuffer()));
  });
  it('a forged box size in a stream of unknown size fails its item without a huge allocation', async () => {
    await stream.forgedBoxInStreamOfUnknownSize(pool(), new Uint8Array(await (await fetch(url('long.h264.mp4'))).arrayBuffer()));
  });
});
