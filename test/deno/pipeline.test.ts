// Deno tier: the same scenario bodies as test/unit/pipeline.test.ts.
import './limits.ts';
import { scenarios } from '../shared/pipeline-scenarios.ts';
import { stoppedItemsAreDisposed, stopWhileBatchBuffersAreHeld } from '../shared/shutdown-scenarios.ts';

declare const Deno: { test(name: string, fn: () => Promise<void>): void };

for (const [name, body] of Object.entries(scenarios)) Deno.test(`pipeline: ${name}`, body);

Deno.test('pipeline: every item made is delivered or disposed, at random stop points', () => stoppedItemsAreDisposed());
Deno.test('pipeline: stop() returns while the consumer holds every batch buffer', () => stopWhileBatchBuffersAreHeld());
