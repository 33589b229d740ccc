// Deno tier: sampling, partitioning, resume, shard streams, mixing, tar writer and picked folders.
import './limits.ts';
import { fileScenarios } from '../shared/sources-files-scenarios.ts';
import { elasticScenarios } from '../shared/sources-elastic-scenarios.ts';
import { samplingScenarios } from '../shared/sources-sampling-scenarios.ts';
import { distributedEnv } from '../../src/sources/index.ts';
import { check } from '../shared/assert.ts';

declare const Deno: {
  test(definition: { name: string; fn: () => Promise<void> | void }): void;
  env: { get(name: string): string | undefined; set(name: string, value: string): void; delete(name: string): void };
};

for (const [name, fn] of Object.entries(samplingScenarios)) Deno.test({ name: `sources sampling: ${name}`, fn });
for (const [name, fn] of Object.entries(elasticScenarios)) Deno.test({ name: `sources elastic: ${name}`, fn });
for (const [name, fn] of Object.entries(fileScenarios)) Deno.test({ name: `sources files: ${name}`, fn });

Deno.test({
  name: 'sources: RANK / WORLD_SIZE / LOCAL_RANK are read from the Deno environment',
  fn() {
    const names = ['RANK', 'WORLD_SIZE', 'LOCAL_RANK'];
    const saved = names.map((n) => Deno.env.get(n));
    try {
      Deno.env.set('RANK', '5');
      Deno.env.set('WORLD_SIZE', '8');
      Deno.env.set('LOCAL_RANK', '1');
      const found = distributedEnv();
      check(found.rank === 5 && found.worldSize === 8 && found.localRank === 1, JSON.stringify(found));
    } finally {
      names.forEach((n, i) => {
        if (saved[i] === undefined) Deno.env.delete(n);
        else Deno.env.set(n, saved[i]!);
      });
    }
  },
});
