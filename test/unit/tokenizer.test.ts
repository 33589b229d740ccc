import { describe, test } from 'vitest';
import { scenarios } from '../shared/tokenizer-scenarios.ts';

// tokenizers.js in Node 20 worker_threads through the pipeline's worker executor.
describe('tokenizer stage', () => {
  for (const [name, body] of Object.entries(scenarios)) test(name, body, 20_000);
});
