// The Deno tier's counterparts of node-serve.ts, node-temp-dirs.ts and node-fixtures.ts: a 127.0.0.1
// server for the shared HTTP scenarios on Deno.serve, temporary folders each test removes when it
// ends, and the generated media fixtures. Deno only (the Deno global); the tests that use it import
// ./limits.ts first, as every Deno test does.
import type { Serve } from './sources-scenarios.ts';

export const serveOnDeno: Serve = async (handler) => {
  const server = Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: () => undefined }, handler);
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
};

/** Temporary folders named `prefix…`: `tempDir` makes one, `removeAll` removes those made since it last ran. */
export function denoTempDirs(prefix: string): { tempDir: () => Promise<string>; removeAll: () => Promise<void> } {
  const made: string[] = [];
  return {
    tempDir: async () => {
      const dir = await Deno.makeTempDir({ prefix });
      made.push(dir);
      return dir;
    },
    removeAll: async () => {
      for (const dir of made.splice(0)) await Deno.remove(dir, { recursive: true });
    },
  };
}

/**
 * A Deno test `${label}: ${name}` for each scenario (Deno's sanitizers on, as by default), each
 * removing the temporary folders of `dirs` when it ends, passed or failed.
 */
export function denoScenarioTests(
  label: string,
  scenarios: Record<string, () => Promise<void>>,
  dirs: { removeAll: () => Promise<void> },
): void {
  for (const [name, body] of Object.entries(scenarios)) {
    Deno.test({
      name: `${label}: ${name}`,
      async fn() {
        try {
          await body();
        } finally {
          await dirs.removeAll();
        }
      },
    });
  }
}

/** Runs `body` with a fresh temporary folder, removed when it ends. */
export async function withTempDir<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir();
  try {
    return await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A generated media fixture's path (scripts/make-fixtures.sh writes them to test/fixtures/generated). */
export const denoFixturePath = (name: string): string => new URL(`../fixtures/generated/${name}`, import.meta.url).pathname;

/** A generated media fixture's bytes. */
export const denoFixture = (name: string): Promise<Uint8Array> => Deno.readFile(denoFixturePath(name));

/** Deno.test's sanitizers for ops and resources, named for the tests that turn them on explicitly. */
export const SANITIZED = { sanitizeOps: true, sanitizeResources: true };
