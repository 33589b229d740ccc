// Node tier: loader() on CPU batches and its option checks (test/shared/front-door-scenarios.ts).
import { it } from 'vitest';
import { frontDoorCpuScenarios, frontDoorOptionScenarios } from '../shared/front-door-scenarios.ts';

for (const [title, body] of Object.entries({ ...frontDoorCpuScenarios, ...frontDoorOptionScenarios })) it(title, body);
