// The part of Deno's API that the Deno tier and the Deno-run benchmarks use, for tsc (Deno itself
// needs no declarations). Library code never relies on these: src/runtime feature-detects Deno.
declare namespace Deno {
  interface TestDefinition {
    name: string;
    fn: () => void | Promise<void>;
    sanitizeOps?: boolean;
    sanitizeResources?: boolean;
  }
  function test(name: string, fn: () => void | Promise<void>): void;
  function test(definition: TestDefinition): void;
  const args: string[];
  const version: { deno: string };
  function readFile(path: string | URL): Promise<Uint8Array>;
  function readTextFileSync(path: string): string;
  function writeTextFile(path: string, text: string): Promise<void>;
  function stat(path: string): Promise<unknown>;
  function serve(
    options: { hostname: string; port: number; onListen?: (addr: { port: number }) => void },
    handler: (request: Request) => Promise<Response>,
  ): { addr: { port: number }; shutdown(): Promise<void> };
  function readTextFile(path: string | URL): Promise<string>;
  function writeTextFileSync(path: string, text: string, options?: { append?: boolean }): void;
  function renameSync(from: string, to: string): void;
  function makeTempDir(options?: { prefix?: string }): Promise<string>;
  function mkdir(path: string, options?: { recursive?: boolean }): Promise<void>;
  function remove(path: string, options?: { recursive?: boolean }): Promise<void>;
  function removeSync(path: string, options?: { recursive?: boolean }): void;
  function writeFile(path: string, data: Uint8Array): Promise<void>;
  interface CommandOutput {
    success: boolean;
    code: number;
    signal: string | null;
    stdout: Uint8Array;
    stderr: Uint8Array;
  }
  class Command {
    constructor(
      program: string,
      options: { args: string[]; stdout?: 'piped' | 'null'; stderr?: 'piped' | 'null'; clearEnv?: boolean; env?: Record<string, string> },
    );
    output(): Promise<CommandOutput>;
    spawn(): { kill(signal: string): void; output(): Promise<CommandOutput> };
  }
  function execPath(): string;
  const env: { get(name: string): string | undefined; set(name: string, value: string): void; toObject(): Record<string, string> };
}
