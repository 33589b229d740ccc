// A small static file server on 127.0.0.1 for bench/parquet.ts: GET with `Range: bytes=a-b`,
// `bytes=a-` and `bytes=-n` (206 with Content-Range), whole files (200), 416 for a range past the
// end; every request waits `delayMs` before its answer starts (a remote store's round trip: the
// Hub's storage is tens of milliseconds away). node:http, so it runs in Deno and Node alike; it
// lives in the benchmark's parent process, so its CPU is not counted in the loader's.
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RangeServer {
  /** `http://127.0.0.1:PORT`; a file is `${base}/${name}` for a name given to serve(). */
  base: string;
  /** Requests answered and body bytes sent so far. */
  counts(): { requests: number; bytes: number };
  close(): Promise<void>;
}

/** Serves `files` (URL name → local path) with `delayMs` added before every answer. */
export async function serveRanges(files: Record<string, string>, delayMs: number): Promise<RangeServer> {
  let requests = 0;
  let bytes = 0;
  const server: Server = createServer((request, response) => {
    requests++;
    const name = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname.slice(1));
    const path = files[name];
    setTimeout(() => {
      if (path === undefined || (request.method !== 'GET' && request.method !== 'HEAD')) {
        response.writeHead(404).end();
        return;
      }
      const size = statSync(path).size;
      const range = /^bytes=(\d*)-(\d*)$/.exec(request.headers.range ?? '');
      let start = 0;
      let end = size - 1;
      let status = 200;
      if (range) {
        status = 206;
        if (range[1] === '') {
          start = Math.max(0, size - Number(range[2]));
        } else {
          start = Number(range[1]);
          if (range[2] !== '') end = Math.min(end, Number(range[2]));
        }
        if (start >= size || start > end || (range[1] === '' && range[2] === '')) {
          response.writeHead(416, { 'Content-Range': `bytes */${size}` }).end();
          return;
        }
      }
      const length = end - start + 1;
      response.writeHead(status, {
        'Accept-Ranges': 'bytes',
        'Content-Length': String(length),
        'Content-Type': 'application/octet-stream',
        ...(status === 206 ? { 'Content-Range': `bytes ${start}-${end}/${size}` } : {}),
      });
      if (request.method === 'HEAD' || length === 0) {
        response.end();
        return;
      }
      bytes += length;
      createReadStream(path, { start, end }).pipe(response);
    }, delayMs);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    counts: () => ({ requests, bytes }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
