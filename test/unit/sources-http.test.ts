import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { afterAll, describe, test } from 'vitest';
import { httpSourceScenarios } from '../shared/sources-http-scenarios.ts';
import type { Serve } from '../shared/sources-scenarios.ts';

// A 127.0.0.1 server that streams web Responses, so a body that errors part-way (the scenarios'
// injected cuts) really aborts the connection, as Deno.serve does in the Deno tier.
const serve: Serve = async (handler) => {
  const server = createServer((req, res) => {
    const aborted = new AbortController();
    res.on('close', () => aborted.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    void (async () => {
      const response = await handler(new Request(`http://127.0.0.1${req.url ?? '/'}`, { headers, signal: aborted.signal }));
      if (res.destroyed) return;
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.flushHeaders(); // a body cut at 0 bytes is then a dropped body, not a failed request
      try {
        // Each write is flushed before the next read, so a cut loses only what follows it.
        const reader = response.body?.getReader();
        for (let step = await reader?.read(); step && !step.done; step = await reader?.read())
          await new Promise((resolve) => res.write(step!.value, resolve));
        res.end();
      } catch {
        res.destroy();
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

const made: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(`${tmpdir()}/tandem-sources-`);
  made.push(dir);
  return dir;
};
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

describe('sources over HTTP and disk (Node)', () => {
  for (const [name, body] of Object.entries(httpSourceScenarios(serve, tempDir))) test(name, body, 30_000);
});
