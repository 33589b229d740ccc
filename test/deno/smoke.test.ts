// Deno tier: the same scenario bodies as the other tiers, run by `deno test`.
import './limits.ts';
import { gpuScenarios } from '../shared/gpu-scenarios.ts';

for (const [title, body] of Object.entries(gpuScenarios('deno'))) Deno.test(title, body);
