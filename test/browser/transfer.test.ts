import { it } from 'vitest';
import { transferScenarios } from '../shared/transfer-scenarios.ts';

for (const method of ['write-buffer', 'staging'] as const) {
  for (const [title, body] of Object.entries(transferScenarios(method))) it(title, body);
}
