// Deno tier: streamed video decoding from memory, a local file and HTTP ranges on 127.0.0.1.
import './limits.ts';
import { DecodePool, fileByteSource, memoryByteSource } from '../../src/decode/index.ts';
import { httpByteSource } from '../../src/sources/index.ts';
import {
  answerRange,
  failingSourcesFailTheirItem,
  forgedBoxInStreamOfUnknownSize,
  LONG_VIDEOS,
  streamedMatchesWhole,
} from '../shared/stream-scenarios.ts';

const path = (name: string) => new URL(`../fixtures/generated/${name}`, import.meta.url).pathname;
const opts = { sanitizeOps: true, sanitizeResources: true };

/** Serves the fixtures with HEAD and single byte ranges. */
function rangeServer(): { addr: { port: number }; shutdown(): Promise<void> } {
  return Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: () => {} }, async (req: Request) => {
    const answer = answerRange(await Deno.readFile(path(new URL(req.url).pathname.slice(1))), req.method, req.headers.get('range'));
    return new Response(answer.body ? new Blob([answer.body as Uint8Array<ArrayBuffer>]) : null, {
      status: answer.status,
      headers: answer.headers,
    });
  });
}

for (const name of LONG_VIDEOS) {
  Deno.test({
    name: `${name}: streamed from memory, a local file and HTTP ranges, same frames as the whole file`,
    ...opts,
    fn: async () => {
      const pool = await DecodePool.create({ threads: 2 });
      const server = rangeServer();
      try {
        const whole = await Deno.readFile(path(name));
        await streamedMatchesWhole(pool, name, whole, memoryByteSource(whole));
        const file = await fileByteSource(path(name));
        try {
          await streamedMatchesWhole(pool, name, whole, file);
        } finally {
          await file.close();
        }
        const remote = await httpByteSource(`http://127.0.0.1:${server.addr.port}/${name}`);
        const traffic = await streamedMatchesWhole(pool, name, whole, remote);
        if (traffic.bytes >= whole.length) throw new Error(`read ${traffic.bytes} bytes of ${whole.length}: seeking should skip most`);
      } finally {
        await server.shutdown();
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
