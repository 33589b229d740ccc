// Deno tier: the same scenario bodies as test/unit/pipeline.test.ts.
import { scenarios } from '../shared/pipeline-scenarios.ts';

declare const Deno: { test(name: string, fn: () => Promise<void>): void };

for (const [name, body] of Object.entries(scenarios)) Deno.test(`pipeline: ${name}`, body);
