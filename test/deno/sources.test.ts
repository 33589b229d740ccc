// Deno tier: the same scenario bodies as test/unit/sources.test.ts, served by Deno.serve.
import './limits.ts';
import { serveOnDeno as serve } from '../shared/deno-serve.ts';
import { httpScenarios, scenarios } from '../shared/sources-scenarios.ts';

for (const [name, fn] of Object.entries(scenarios)) Deno.test({ name: `sources: ${name}`, fn });
for (const [name, fn] of Object.entries(httpScenarios(serve))) Deno.test({ name: `sources http: ${name}`, fn });
