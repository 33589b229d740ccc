import { it } from 'vitest';
import { loaderScenarios } from '../shared/loader-scenarios.ts';

for (const [title, body] of Object.entries(loaderScenarios)) it(title, body);
