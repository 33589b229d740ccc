// Deno tier: the same scenario bodies as test/unit/sources.test.ts, served by Deno.serve.
import './limits.ts';
import { httpScenarios, scenarios, type Serve } from '../shared/sources-scenarios.ts';

declare const Deno: {
  test(definition: { name: string; fn: () => Promise<void>; sanitizeOps?: boolean; sanitizeResources?: boolean }): void;
  serve(
    options: { hostname: string; port: number; onListen?: (addr: { port: number }) => void },
    handler: (request: Request) => Promise<Response>,
  ): { addr: { port: number }; shutdown(): Promise<void> };
};

const serve: Serve = async (handler) => {
  const server = Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: () => undefined }, handler);
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
};

for (const [name, fn] of Object.entries(scenarios)) Deno.test({ name: `sources: ${name}`, fn });
for (const [name, fn] of Object.entries(httpScenarios(serve))) Deno.test({ name: `sources http: ${name}`, fn });
