import fc from 'fast-check';
import { describe, test } from 'vitest';
import { DistributedSampler, partitionList, resolvePartition } from '../../src/sources/index.ts';
import { check } from '../shared/assert.ts';
import { elasticScenarios } from '../shared/sources-elastic-scenarios.ts';
import { samplingScenarios } from '../shared/sources-sampling-scenarios.ts';

describe('sources: sampling, partitioning, resume, shard streams, mixing', () => {
  for (const [name, body] of Object.entries(samplingScenarios)) test(name, body, 60_000);
});

describe('sources: elastic resumption of shard streams', () => {
  for (const [name, body] of Object.entries(elasticScenarios)) test(name, body, 60_000);
});

// Property tests on top of the shared fixed combos: fast-check searches for (world, size, seed)
// counterexamples and shrinks them.
describe('sources: partition properties', () => {
  test('exactly once across ranks × workers, for any sizes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (world, workers, size, seed) => {
          const seen: number[] = [];
          for (let rank = 0; rank < world; rank++) {
            for (let w = 0; w < workers; w++)
              seen.push(...new DistributedSampler({ size, seed, rank, worldSize: world, workerId: w, numWorkers: workers }));
          }
          seen.sort((a, b) => a - b);
          return seen.length === size && seen.every((v, i) => v === i);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('resume at any step equals the uninterrupted run', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 120 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.nat(),
        fc.constantFrom('exact', 'pad', 'drop') as fc.Arbitrary<'exact' | 'pad' | 'drop'>,
        (world, size, seed, stopSeed, uneven) => {
          const options = { size, seed, rank: seed % world, worldSize: world, epochs: 2, uneven };
          const whole = [...new DistributedSampler(options)];
          const stopAt = stopSeed % (whole.length + 1);
          const first = new DistributedSampler(options);
          const head = Array.from({ length: stopAt }, () => first.next().value as number);
          const rest = [...DistributedSampler.fromState(JSON.parse(JSON.stringify(first.state())))];
          return [...head, ...rest].join() === whole.join();
        },
      ),
      { numRuns: 300 },
    );
  });

  test('rank and world size come from RANK / WORLD_SIZE when not given', () => {
    const saved = { RANK: process.env.RANK, WORLD_SIZE: process.env.WORLD_SIZE };
    try {
      process.env.RANK = '2';
      process.env.WORLD_SIZE = '3';
      const p = resolvePartition({});
      check(p.consumer === 2 && p.consumers === 3, `from env: ${JSON.stringify(p)}`);
      check(partitionList(['a', 'b', 'c', 'd', 'e', 'f'], p).join() === 'c,f', 'rank 2 of 3');
      check(resolvePartition({ rank: 0, worldSize: 1 }).consumers === 1, 'options win over env');
      process.env.RANK = 'x';
      let threw = false;
      try {
        resolvePartition({});
      } catch {
        threw = true;
      }
      check(threw, 'a malformed $RANK is an error, not rank 0');
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });
});
