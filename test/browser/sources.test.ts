import { describe, test } from 'vitest';
import { scenarios } from '../shared/sources-scenarios.ts';

// The tar and WebDataset scenarios in Chromium (the HTTP ones need a server the page cannot start;
// they run in the Node and Deno tiers).
describe('sources (Chromium)', () => {
  for (const [name, body] of Object.entries(scenarios)) test(name, body);
});
