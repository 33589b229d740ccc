// Planted bottlenecks in Node: the shared bodies in test/shared/bottleneck-scenarios.ts.
import { describe, test } from 'vitest';
import { scenarios } from '../shared/bottleneck-scenarios.ts';

describe('bottleneck naming', () => {
  for (const [name, body] of Object.entries(scenarios)) test(name, body, 20_000);
});
