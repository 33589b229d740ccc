// Node tier: loader() on CPU batches and its option checks (test/shared/front-door-scenarios.ts).
import { it } from 'vitest';
import { frontDoorCpuScenarios, frontDoorFileScenarios, frontDoorOptionScenarios } from '../shared/front-door-scenarios.ts';

for (const [title, body] of Object.entries({ ...frontDoorCpuScenarios, ...frontDoorFileScenarios, ...frontDoorOptionScenarios }))
  it(title, body);
