import './limits.ts';
import { frontDoorCpuScenarios, frontDoorGpuScenarios, frontDoorOptionScenarios } from '../shared/front-door-scenarios.ts';

for (const [title, body] of Object.entries({ ...frontDoorCpuScenarios, ...frontDoorGpuScenarios, ...frontDoorOptionScenarios }))
  Deno.test(title, body);
