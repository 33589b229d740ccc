import './limits.ts';
import { syncScenarios } from '../shared/sync-scenarios.ts';

for (const [name, body] of Object.entries(syncScenarios)) Deno.test(`SlotPool: ${name}`, body);
