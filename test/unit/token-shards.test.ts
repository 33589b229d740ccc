import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, describe, test } from 'vitest';
import { serveOnNode as serve } from '../shared/node-serve.ts';
import { tokenShardScenarios } from '../shared/token-shard-scenarios.ts';
import { tokenShardStreamScenarios } from '../shared/token-shard-stream-scenarios.ts';

const made: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(`${tmpdir()}/tandem-token-shards-`);
  made.push(dir);
  return dir;
};
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

describe('token shards (Node)', () => {
  for (const [name, body] of Object.entries(tokenShardScenarios)) test(name, body, 20_000);
  for (const [name, body] of Object.entries(tokenShardStreamScenarios(serve, tempDir))) test(name, body, 20_000);
});
