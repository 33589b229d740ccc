import { describe, test } from 'vitest';
import { serveOnNode as serve } from '../shared/node-serve.ts';
import { httpScenarios, scenarios } from '../shared/sources-scenarios.ts';

describe('sources scenarios', () => {
  for (const [name, body] of Object.entries(scenarios)) test(name, body, 20_000);
  for (const [name, body] of Object.entries(httpScenarios(serve))) test(name, body, 20_000);
});
