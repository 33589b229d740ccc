// Deno tier: shards, URL lists, caches and the shards tool against a fault-injecting Deno.serve.
import './limits.ts';
import { httpSourceScenarios } from '../shared/sources-http-scenarios.ts';
import type { Serve } from '../shared/sources-scenarios.ts';

declare const Deno: {
  test(definition: { name: string; fn: () => Promise<void> }): void;
  serve(
    options: { hostname: string; port: number; onListen?: (addr: { port: number }) => void; onError?: (error: unknown) => Response },
    handler: (request: Request) => Promise<Response>,
  ): { addr: { port: number }; shutdown(): Promise<void> };
  makeTempDir(options: { prefix: string }): Promise<string>;
  remove(path: string, options: { recursive: boolean }): Promise<void>;
};

const serve: Serve = async (handler) => {
  const server = Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: () => undefined }, handler);
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
};

const made: string[] = [];
const tempDir = async () => {
  const dir = await Deno.makeTempDir({ prefix: 'tandem-sources-' });
  made.push(dir);
  return dir;
};

for (const [name, body] of Object.entries(httpSourceScenarios(serve, tempDir))) {
  Deno.test({
    name: `sources http: ${name}`,
    async fn() {
      try {
        await body();
      } finally {
        for (const dir of made.splice(0)) await Deno.remove(dir, { recursive: true });
      }
    },
  });
}
