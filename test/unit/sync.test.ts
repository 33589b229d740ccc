import { describe, it } from 'vitest';
import { syncScenarios } from '../shared/sync-scenarios.ts';

describe('SlotPool (Node)', () => {
  for (const [name, body] of Object.entries(syncScenarios)) it(name, body);
});
