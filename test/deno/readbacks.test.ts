import './limits.ts';
import { readbackScenarios } from '../shared/readback-scenarios.ts';

for (const [title, body] of Object.entries(readbackScenarios(false))) Deno.test(title, body);
