// The part of Deno's API the Deno tier uses, for tsc (deno itself needs no declarations).
declare namespace Deno {
  interface TestDefinition {
    name: string;
    fn: () => void | Promise<void>;
    sanitizeOps?: boolean;
    sanitizeResources?: boolean;
  }
  function test(name: string, fn: () => void | Promise<void>): void;
  function test(definition: TestDefinition): void;
}
