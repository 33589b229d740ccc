// Deno tier: streamed video decoding from memory, a local file and HTTP ranges on 127.0.0.1.
import { DecodePool, fileByteSource, memoryByteSource } from '../../src/decode/index.ts';
import { httpByteSource } from '../../src/sources/index.ts';
import { failingSourcesFailTheirItem, LONG_VIDEOS, streamedMatchesWhole } from '../shared/stream-scenarios.ts';

const path = (name: string) => new URL(`../fixtures/generated/${name}`, import.meta.url).pathname;
const opts = { sanitizeOps: true, sanitizeResources: true };

/** Serves the fixtures with HEAD and single byte ranges. */
function rangeServer(): { addr: { port: number }; shutdown(): Promise<void> } {
  return Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: () => {} }, async (req: Request) => {
    const bytes = await Deno.readFile(path(new URL(req.url).pathname.slice(1)));
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.get('range') ?? '');
    if (req.method === 'HEAD' || !range) return new Response(req.method === 'HEAD' ? null : new Blob([bytes as Uint8Array<ArrayBuffer>]), { headers: { 'content-length': String(bytes.length) } });
    const start = Number(range[1]);
    const end = Math.min(Number(range[2]), bytes.length - 1);
    if (start >= bytes.length) return new Response(null, { status: 416 });
    return new Response(new Blob([bytes.subarray(start, end + 1) as Uint8Array<ArrayBuffer>]), { status: 206, headers: { 'content-range': `bytes ${start}-${end}/${bytes.length}` } });
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
    } finally {
      await pool.close();
    }
  },
});
