// Deno tier: errors from the file system (Deno.errors.NotFound, IsADirectory, NotADirectory) and
// from a worker's error event reach callers as Tandem's typed errors (test/shared/typed-io-scenarios.ts).
import './limits.ts';
import { typedIoScenarios } from '../shared/typed-io-scenarios.ts';

declare const Deno: {
  test(definition: { name: string; fn: () => Promise<void> }): void;
  makeTempDir(options: { prefix: string }): Promise<string>;
  remove(path: string, options: { recursive: boolean }): Promise<void>;
};

const made: string[] = [];
const tempDir = async () => {
  const dir = await Deno.makeTempDir({ prefix: 'tandem-typed-io-' });
  made.push(dir);
  return dir;
};

for (const [name, body] of Object.entries(typedIoScenarios(tempDir))) {
  Deno.test({
    name: `typed io errors: ${name}`,
    async fn() {
      try {
        await body();
      } finally {
        for (const dir of made.splice(0)) await Deno.remove(dir, { recursive: true });
      }
    },
  });
}
