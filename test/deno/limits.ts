// Every test of the Deno tier gets a time limit (Deno.test has none): imported first by each test
// file, this wraps Deno.test so that a test still running after LIMIT_MS fails with its name,
// instead of a deadlock holding the tier until the tier's own `timeout` in scripts/test.sh.
// A unit test (test/unit/structure.test.ts) checks that every Deno test file imports it.
const LIMIT_MS = Number(Deno.env.get('TANDEM_DENO_TEST_LIMIT_MS') ?? 300_000);

type TestFn = (t: unknown) => void | Promise<void>;
interface Definition {
  name: string;
  fn: TestFn;
  [option: string]: unknown;
}

const register = Deno.test as unknown as (definition: Definition) => void;

function limited(definition: Definition): Definition {
  const { name, fn } = definition;
  return {
    ...definition,
    fn: async (t: unknown) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`"${name}" ran past its ${LIMIT_MS / 1000} s limit`)), LIMIT_MS);
      });
      try {
        await Promise.race([fn(t), late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

(Deno as unknown as { test: (...args: unknown[]) => void }).test = (...args: unknown[]) => {
  const [first, second, third] = args;
  if (typeof first === 'string' && typeof second === 'function') return register(limited({ name: first, fn: second as TestFn }));
  if (typeof first === 'string' && typeof third === 'function')
    return register(limited({ ...(second as object), name: first, fn: third as TestFn }));
  if (typeof first === 'object' && first !== null) return register(limited(first as Definition));
  throw new TypeError('Deno.test: unsupported arguments');
};
