// The browser tier's HTTP servers (a vitest globalSetup, run in Node). A page cannot listen on a
// port, so this listens for it: a control server on 127.0.0.1, whose URL the tests get through
// inject('relayUrl'), opens relay servers on 127.0.0.1 and hands each request they receive to the
// page, which answers it with its own handler (test/browser-setup/serve.ts: a `Serve` for the
// shared scenarios, so a MockHub lives in the page and a scenario edits it as in Node and Deno).
// Test-only protocol, every answer with CORS for the page's origin:
//   POST /servers?client=C    a relay server for page C: { id, url }
//   GET  /next?client=C       the requests waiting for C (long poll, [] after a while):
//                             [{ id, server, method, url, headers: [name, value][], body: base64 | null }]
//   POST /reply/ID?status=N&headers=JSON   the answer to request ID; the body is its bytes
//   POST /close/SERVER        closes a relay server (requests still waiting get 503)
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The control server of test/browser-setup/relay.ts. */
    relayUrl: string;
  }
}

export interface RelayedRequest {
  id: string;
  server: string;
  method: string;
  url: string;
  headers: [string, string][];
  body: string | null;
}

interface Client {
  queue: RelayedRequest[];
  wake?: () => void;
}

const POLL_MS = 10_000;
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'content-type',
};

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const clients = new Map<string, Client>();
  const relays = new Map<string, { server: Server; client: string }>();
  /** Relayed requests waiting for the page's answer. */
  const waiting = new Map<string, { res: ServerResponse; server: string }>();
  const clientOf = (name: string) => {
    let client = clients.get(name);
    if (!client) clients.set(name, (client = { queue: [] }));
    return client;
  };

  async function openRelay(clientName: string): Promise<{ id: string; url: string }> {
    const id = randomUUID();
    const client = clientOf(clientName);
    const server = createServer((req, res) => {
      void bodyOf(req).then((body) => {
        const request: RelayedRequest = {
          id: randomUUID(),
          server: id,
          method: req.method ?? 'GET',
          url: `${url}${req.url ?? '/'}`,
          headers: Object.entries(req.headers).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v] as [string, string]] : [])),
          body: body.length > 0 ? body.toString('base64') : null,
        };
        waiting.set(request.id, { res, server: id });
        res.on('close', () => waiting.delete(request.id));
        client.queue.push(request);
        client.wake?.();
      });
    });
    const url = await listen(server);
    relays.set(id, { server, client: clientName });
    return { id, url };
  }

  async function closeRelay(id: string): Promise<void> {
    const relay = relays.get(id);
    if (!relay) return;
    relays.delete(id);
    for (const [rid, w] of waiting) {
      if (w.server !== id) continue;
      waiting.delete(rid);
      w.res.writeHead(503).end();
    }
    const client = clients.get(relay.client);
    if (client) client.queue = client.queue.filter((r) => r.server !== id);
    await close(relay.server);
  }

  /** The queued requests, at once or as soon as one comes (or [] after POLL_MS). */
  async function next(clientName: string, res: ServerResponse): Promise<RelayedRequest[]> {
    const client = clientOf(clientName);
    if (client.queue.length === 0)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, POLL_MS);
        res.on('close', done); // the page stopped polling
        function done() {
          clearTimeout(timer);
          if (client.wake === done) client.wake = undefined;
          resolve();
        }
        client.wake?.();
        client.wake = done;
      });
    return client.queue.splice(0);
  }

  const control = createServer((req, res) => {
    const send = (status: number, body?: unknown) => {
      if (res.destroyed) return;
      res.writeHead(status, { ...CORS, 'content-type': 'application/json' }).end(body === undefined ? undefined : JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const [, route, arg] = url.pathname.split('/');
    const client = url.searchParams.get('client') ?? '';
    void (async () => {
      if (req.method === 'OPTIONS') return send(204);
      if (req.method === 'POST' && route === 'servers') return send(200, await openRelay(client));
      if (req.method === 'GET' && route === 'next') return send(200, await next(client, res));
      if (req.method === 'POST' && route === 'reply' && arg) {
        const body = await bodyOf(req);
        const w = waiting.get(arg);
        waiting.delete(arg);
        if (w && !w.res.destroyed) {
          const headers = JSON.parse(url.searchParams.get('headers') ?? '[]') as [string, string][];
          w.res.writeHead(Number(url.searchParams.get('status') ?? 500), Object.fromEntries(headers)).end(body);
        }
        return send(200, { delivered: w !== undefined });
      }
      if (req.method === 'POST' && route === 'close' && arg) return send(200, await closeRelay(arg));
      send(404, { error: `no route ${req.method} ${url.pathname}` });
    })().catch((error: unknown) => send(500, { error: String(error) }));
  });
  project.provide('relayUrl', await listen(control));
  return async () => {
    for (const id of [...relays.keys()]) await closeRelay(id);
    await close(control);
  };
}
