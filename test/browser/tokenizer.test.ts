import { describe, test } from 'vitest';
import { scenarios } from '../shared/tokenizer-scenarios.ts';

// The same bodies as the Node and Deno tiers; tokenizers.js runs in real module workers.
describe('tokenizer stage (Chromium)', () => {
  for (const [name, body] of Object.entries(scenarios)) test(name, body, 30_000);
});
