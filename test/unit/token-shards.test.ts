import { describe, test } from 'vitest';
import { serveOnNode as serve } from '../shared/node-serve.ts';
import { tokenShardScenarios } from '../shared/token-shard-scenarios.ts';
import { tokenShardStreamScenarios } from '../shared/token-shard-stream-scenarios.ts';
import { useTempDirs } from '../shared/node-temp-dirs.ts';

const tempDir = useTempDirs('tandem-token-shards-');

describe('token shards (Node)', () => {
  for (const [name, body] of Object.entries(tokenShardScenarios)) test(name, body, 20_000);
  for (const [name, body] of Object.entries(tokenShardStreamScenarios(serve, tempDir))) test(name, body, 20_000);
});
