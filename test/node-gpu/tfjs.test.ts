import { it } from 'vitest';
import { tfjsScenarios } from '../shared/tfjs-scenarios.ts';

for (const [name, scenario] of Object.entries(tfjsScenarios)) it(name, { timeout: 120_000 }, scenario);
