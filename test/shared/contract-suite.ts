// The loader contract as the vitest tiers (Node and Chromium) run it: one pthreads pool for the
// file, the subjects (loader(), videoLoader(), textLoader()) made on it once, and a describe block
// per subject with every contract scenario (test/shared/loader-contract-scenarios.ts). No node: imports.
import { beforeAll, describe, it } from 'vitest';
import { contractScenarios, contractSubjects, type ContractSubject } from './loader-contract-scenarios.ts';
import type { FixtureLoader } from './media-scenarios.ts';
import { usePool } from './use-pool.ts';

export function contractSuite(load: FixtureLoader): void {
  const pool = usePool({ threads: 2 });
  let subjects: ContractSubject[] = [];
  beforeAll(async () => {
    subjects = await contractSubjects(pool(), load);
  });

  for (const name of ['loader', 'videoLoader', 'textLoader'] as const) {
    describe(`loader contract: ${name}`, () => {
      for (const [scenario, body] of Object.entries(contractScenarios)) {
        it(scenario, () => {
          const subject = subjects.find((s) => s.name === name);
          if (!subject) throw new Error(`no subject ${name}`);
          return body(subject);
        });
      }
    });
  }
}
