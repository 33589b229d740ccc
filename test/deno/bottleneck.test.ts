// Deno tier: the same planted-bottleneck bodies as test/unit/bottleneck.test.ts.
import './limits.ts';
import { scenarios } from '../shared/bottleneck-scenarios.ts';

declare const Deno: { test(name: string, fn: () => Promise<void>): void };

for (const [name, body] of Object.entries(scenarios)) Deno.test(`bottleneck: ${name}`, body);
