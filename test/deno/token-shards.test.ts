// Deno tier: token shards one at a time, and through ShardStream from files and a Deno.serve server.
import './limits.ts';
import type { Serve } from '../shared/sources-scenarios.ts';
import { tokenShardScenarios } from '../shared/token-shard-scenarios.ts';
import { tokenShardStreamScenarios } from '../shared/token-shard-stream-scenarios.ts';

declare const Deno: {
  test(definition: { name: string; fn: () => Promise<void> }): void;
  serve(
    options: { hostname: string; port: number; onListen?: (addr: { port: number }) => void },
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
  const dir = await Deno.makeTempDir({ prefix: 'tandem-token-shards-' });
  made.push(dir);
  return dir;
};

const all = { ...tokenShardScenarios, ...tokenShardStreamScenarios(serve, tempDir) };
for (const [name, body] of Object.entries(all)) {
  Deno.test({
    name: `token shards: ${name}`,
    async fn() {
      try {
        await body();
      } finally {
        for (const dir of made.splice(0)) await Deno.remove(dir, { recursive: true });
      }
    },
  });
}
