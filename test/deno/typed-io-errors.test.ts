// Deno tier: errors from the file system (Deno.errors.NotFound, IsADirectory, NotADirectory) and
// from a worker's error event reach callers as Tandem's typed errors (test/shared/typed-io-scenarios.ts).
import './limits.ts';
import { denoScenarioTests, denoTempDirs } from '../shared/deno-serve.ts';
import { typedIoScenarios } from '../shared/typed-io-scenarios.ts';

const dirs = denoTempDirs('tandem-typed-io-');
denoScenarioTests('typed io errors', typedIoScenarios(dirs.tempDir), dirs);
