import { it } from 'vitest';
import { tfjsScenarios } from '../shared/tfjs-scenarios.ts';

for (const [name, scenario] of Object.entries(tfjsScenarios)) it(name, { timeout: 300_000 }, scenario);
