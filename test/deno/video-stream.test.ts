// Deno tier: streamed video decoding from memory, a local file and HTTP ranges on 127.0.0.1.
import './limits.ts';
import { DecodePool } from '../../src/decode/index.ts';
import { serveOnDeno } from '../shared/deno-serve.ts';
import {
  everySourceMatchesWhole,
  failingSourcesFailTheirItem,
  forgedBoxInStreamOfUnknownSize,
  LONG_VIDEOS,
  rangeHandler,
} from '../shared/stream-scenarios.ts';

const path = (name: string) => new URL(`../fixtures/generated/${name}`, import.meta.url).pathname;
const opts = { sanitizeOps: true, sanitizeResources: true };

for (const name of LONG_VIDEOS) {
  Deno.test({
    name: `${name}: streamed from memory, a local file and HTTP ranges, same frames as the whole file`,
    ...opts,
    fn: async () => {
      const pool = await DecodePool.create({ threads: 2 });
      // The fixtures with HEAD and single byte ranges.
      const server = await serveOnDeno(rangeHandler((file) => Deno.readFile(path(file))));
      try {
        await everySourceMatchesWhole(pool, name, await Deno.readFile(path(name)), path(name), `${server.url}/${name}`);
      } finally {
        await server.close();
        await pool.close();
      }
    },
  });
}
Deno.test({
  name: 'streamed decoding: a failing or stalled source fails its item, the pool goes on',
  ...opts,
  fn: async () => {
    const pool = await DecodePool.create({ threads: 2 });
    try {
      await failingSourcesFailTheirItem(pool, await Deno.readFile(path('long.h264.mp4')));
      await forgedBoxInStreamOfUnknownSize(pool, await Deno.readFile(path('long.h264.mp4')));
    } finally {
      await pool.close();
    }
  },
});
