import { describe, it } from 'vitest';
import { syncScenarios } from '../shared/sync-scenarios.ts';

describe('SlotPool (Chromium)', () => {
  for (const [name, body] of Object.entries(syncScenarios)) it(name, body);
});
