import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, describe, test } from 'vitest';
import { serveOnNode as serve } from '../shared/node-serve.ts';
import { httpSourceScenarios } from '../shared/sources-http-scenarios.ts';

const made: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(`${tmpdir()}/tandem-sources-`);
  made.push(dir);
  return dir;
};
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

describe('sources over HTTP and disk (Node)', () => {
  for (const [name, body] of Object.entries(httpSourceScenarios(serve, tempDir))) test(name, body, 30_000);
});
