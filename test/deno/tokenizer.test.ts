// Deno tier: the same scenario bodies as test/unit/tokenizer.test.ts.
import './limits.ts';
import { scenarios } from '../shared/tokenizer-scenarios.ts';

declare const Deno: { test(name: string, fn: () => Promise<void>): void };

for (const [name, body] of Object.entries(scenarios)) Deno.test(`tokenizer: ${name}`, body);
