// Deno tier: the decoder robustness scenarios (test/shared/robustness.ts) on a pthreads pool.
import './limits.ts';
import type { FixtureLoader } from '../shared/media-scenarios.ts';
import { inputRobustness, poolRobustness } from '../shared/robustness.ts';

const load: FixtureLoader = (name) => Deno.readFile(new URL(`../fixtures/generated/${name}`, import.meta.url));
const opts = { sanitizeOps: true, sanitizeResources: true };

const scenarios = { ...poolRobustness(load, 'pthreads'), ...inputRobustness(load, { seed: 0xde70, perSeed: 100 }) };
for (const [title, fn] of Object.entries(scenarios)) Deno.test({ name: title, ...opts, fn });
