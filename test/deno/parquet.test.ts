// Deno tier: Parquet datasets and the Hub's listings against Deno.serve and a temporary folder.
import './limits.ts';
import { denoScenarioTests, denoTempDirs, serveOnDeno } from '../shared/deno-serve.ts';
import { parquetScenarios } from '../shared/parquet-scenarios.ts';

const dirs = denoTempDirs('tandem-parquet-');
denoScenarioTests('parquet', parquetScenarios(serveOnDeno, dirs.tempDir), dirs);
