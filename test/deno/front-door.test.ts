import './limits.ts';
import {
  frontDoorCpuScenarios,
  frontDoorFileScenarios,
  frontDoorGpuScenarios,
  frontDoorOptionScenarios,
} from '../shared/front-door-scenarios.ts';

for (const [title, body] of Object.entries({
  ...frontDoorCpuScenarios,
  ...frontDoorFileScenarios,
  ...frontDoorGpuScenarios,
  ...frontDoorOptionScenarios,
}))
  Deno.test(title, body);
