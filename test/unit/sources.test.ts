import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'vitest';
import { httpScenarios, scenarios, type Serve } from '../shared/sources-scenarios.ts';

// A 127.0.0.1 server that speaks web Request/Response, so the scenarios' handler is the same one
// Deno.serve runs in the Deno tier.
const serve: Serve = async (handler) => {
  const server = createServer((req, res) => {
    const aborted = new AbortController();
    res.on('close', () => aborted.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, { headers, signal: aborted.signal });
    void handler(request).then(async (response) => {
      if (res.destroyed) return;
      res.writeHead(response.status, Object.fromEntries(response.headers));
      // Streamed chunk by chunk, as Deno.serve does: a body that never ends must reach the client.
      if (response.body) {
        const reader = response.body.getReader();
        res.on('close', () => void reader.cancel().catch(() => undefined));
        for (;;) {
          const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
          if (done || res.destroyed) break;
          if (!res.write(value)) await new Promise((resolve) => res.once('drain', resolve));
        }
      }
      res.end();
    });
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

describe('sources scenarios', () => {
  for (const [name, body] of Object.entries(scenarios)) test(name, body, 20_000);
  for (const [name, body] of Object.entries(httpScenarios(serve))) test(name, body, 20_000);
});
