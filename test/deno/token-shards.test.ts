// Deno tier: token shards one at a time, and through ShardStream from files and a Deno.serve server.
import './limits.ts';
import { denoScenarioTests, denoTempDirs, serveOnDeno } from '../shared/deno-serve.ts';
import { tokenShardScenarios } from '../shared/token-shard-scenarios.ts';
import { tokenShardStreamScenarios } from '../shared/token-shard-stream-scenarios.ts';

const dirs = denoTempDirs('tandem-token-shards-');
denoScenarioTests('token shards', { ...tokenShardScenarios, ...tokenShardStreamScenarios(serveOnDeno, dirs.tempDir) }, dirs);
