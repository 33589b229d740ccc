import { describe, test } from 'vitest';
import { serveOnNode as serve } from '../shared/node-serve.ts';
import { httpSourceScenarios } from '../shared/sources-http-scenarios.ts';
import { useTempDirs } from '../shared/node-temp-dirs.ts';

const tempDir = useTempDirs('tandem-sources-');

describe('sources over HTTP and disk (Node)', () => {
  for (const [name, body] of Object.entries(httpSourceScenarios(serve, tempDir))) test(name, body, 30_000);
});
