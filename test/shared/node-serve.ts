// The Node tiers' 127.0.0.1 server for the shared HTTP scenarios: it speaks web Request/Response,
// so a scenario's handler is the same one Deno.serve runs in the Deno tier, and it streams bodies
// as Deno.serve does. Node only (node:http): browser and Deno tiers bring their own.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Serve } from './sources-scenarios.ts';

export const serveOnNode: Serve = async (handler) => {
  const server = createServer((req, res) => {
    const aborted = new AbortController();
    res.on('close', () => aborted.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    void (async () => {
      const response = await handler(
        new Request(`http://127.0.0.1${req.url ?? '/'}`, { method: req.method, headers, signal: aborted.signal }),
      );
      if (res.destroyed) return;
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.flushHeaders(); // a body cut at 0 bytes is then a dropped body, not a failed request
      const reader = response.body?.getReader();
      res.on('close', () => void reader?.cancel().catch(() => undefined));
      try {
        // Chunk by chunk, each flushed before the next read: a body that never ends still reaches
        // the client, and a body that errors part-way loses only what follows the cut.
        for (let step = await reader?.read(); step && !step.done && !res.destroyed; step = await reader?.read()) {
          const chunk = step.value;
          await new Promise((resolve) => res.write(chunk, resolve));
        }
        res.end();
      } catch {
        res.destroy(); // the body failed: the connection drops, as with Deno.serve
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
};
