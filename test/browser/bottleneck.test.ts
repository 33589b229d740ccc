import { describe, test } from 'vitest';
import { scenarios } from '../shared/bottleneck-scenarios.ts';

// The same planted-bottleneck bodies as the Node and Deno tiers, on Chromium's event loop.
describe('bottleneck naming (Chromium)', () => {
  for (const [name, body] of Object.entries(scenarios)) test(name, body, 30_000);
});
