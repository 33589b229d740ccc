// The Chromium tier's `Serve` (test/shared/sources-scenarios.ts): the handler runs in the page, and
// the control server of test/browser-setup/relay.ts (a vitest globalSetup, in Node) listens on
// 127.0.0.1 for it, relaying each request here and the handler's answer back. What the page's fetch
// sees is a real server on another origin: CORS preflights and redirects included.
import { inject } from 'vitest';
import type { Serve } from '../shared/sources-scenarios.ts';
import type { RelayedRequest } from './relay.ts';

type Handler = Parameters<Serve>[0];

const client = crypto.randomUUID();
const handlers = new Map<string, Handler>();
let polling: AbortController | undefined;

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

async function answer(control: string, request: RelayedRequest): Promise<void> {
  const handler = handlers.get(request.server);
  let response: Response;
  try {
    // Forbidden request headers (Host, Origin, Access-Control-Request-*) are dropped here.
    const init: RequestInit = { method: request.method, headers: request.headers };
    if (request.body !== null) init.body = fromBase64(request.body).slice();
    response = handler ? await handler(new Request(request.url, init)) : new Response('server closed', { status: 503 });
  } catch (error) {
    response = new Response(`handler failed: ${String(error)}`, { status: 500 });
  }
  const body = request.method === 'HEAD' || !response.body ? new Uint8Array(0) : new Uint8Array(await response.arrayBuffer());
  const headers = encodeURIComponent(JSON.stringify([...response.headers]));
  await fetch(`${control}/reply/${request.id}?status=${response.status}&headers=${headers}`, { method: 'POST', body });
}

async function poll(control: string, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    let batch: RelayedRequest[];
    try {
      batch = (await (await fetch(`${control}/next?client=${client}`, { signal })).json()) as RelayedRequest[];
    } catch {
      if (signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    for (const request of batch) void answer(control, request).catch(() => undefined);
  }
}

export const relayServe: Serve = async (handler) => {
  const control = inject('relayUrl');
  const opened = await fetch(`${control}/servers?client=${client}`, { method: 'POST' });
  const { id, url } = (await opened.json()) as { id: string; url: string };
  handlers.set(id, handler);
  if (!polling) {
    polling = new AbortController();
    void poll(control, polling.signal);
  }
  return {
    url,
    async close() {
      handlers.delete(id);
      await fetch(`${control}/close/${id}`, { method: 'POST' });
      if (handlers.size === 0) {
        polling?.abort();
        polling = undefined;
      }
    },
  };
};
