import './limits.ts';
import { loaderScenarios } from '../shared/loader-scenarios.ts';

for (const [title, body] of Object.entries(loaderScenarios)) Deno.test(title, body);
