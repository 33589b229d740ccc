import { describe, test } from 'vitest';
import { scenarios } from '../shared/pipeline-scenarios.ts';

// The same bodies as the Node and Deno tiers; the worker executor runs on real module workers.
describe('pipeline scenarios (Chromium)', () => {
  for (const [name, body] of Object.entries(scenarios)) test(name, body, 30_000);
});
