import { it } from 'vitest';
import { readbackScenarios } from '../shared/readback-scenarios.ts';

for (const [title, body] of Object.entries(readbackScenarios(false))) it(title, body);
