// dawn on lavapipe: loader() into WebGPU buffers, checked against the CPU reference.
import { it } from 'vitest';
import { frontDoorGpuScenarios } from '../shared/front-door-scenarios.ts';

for (const [title, body] of Object.entries(frontDoorGpuScenarios)) it(title, body);
