import { describe, test } from 'vitest';
import { scenarios } from '../shared/pipeline-scenarios.ts';
import { stoppedItemsAreDisposed, stopWhileBatchBuffersAreHeld } from '../shared/shutdown-scenarios.ts';

// The same bodies as the Node and Deno tiers; the worker executor runs on real module workers.
describe('pipeline scenarios (Chromium)', () => {
  for (const [name, body] of Object.entries(scenarios)) test(name, body, 30_000);
});

describe('stopping while items hold resources (Chromium)', () => {
  test('every item made is delivered or disposed, at random stop points', () => stoppedItemsAreDisposed(), 30_000);
  test('stop() returns while the consumer holds every batch buffer', () => stopWhileBatchBuffersAreHeld(), 30_000);
});
