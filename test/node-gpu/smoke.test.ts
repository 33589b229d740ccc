import { it } from 'vitest';
import { gpuScenarios } from '../shared/gpu-scenarios.ts';

for (const [title, body] of Object.entries(gpuScenarios('node'))) it(title, body);
