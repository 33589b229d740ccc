import './limits.ts';
import { transferScenarios } from '../shared/transfer-scenarios.ts';

for (const method of ['write-buffer', 'staging'] as const) {
  for (const [title, body] of Object.entries(transferScenarios(method))) Deno.test(title, body);
}
