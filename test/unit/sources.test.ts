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
      const body = new Uint8Array(await response.arrayBuffer());
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(body);
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
