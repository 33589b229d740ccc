import { describe, test } from 'vitest';
import { fileScenarios } from '../shared/sources-files-scenarios.ts';

describe('sources: tar writer, picked and dropped folders', () => {
  for (const [name, body] of Object.entries(fileScenarios)) test(name, body, 20_000);
});
