// Deno tier: shards, URL lists, caches and the shards tool against a fault-injecting Deno.serve.
import './limits.ts';
import { denoScenarioTests, denoTempDirs, serveOnDeno } from '../shared/deno-serve.ts';
import { httpSourceScenarios } from '../shared/sources-http-scenarios.ts';

const dirs = denoTempDirs('tandem-sources-');
denoScenarioTests('sources http', httpSourceScenarios(serveOnDeno, dirs.tempDir), dirs);
