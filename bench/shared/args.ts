// Command-line options of the benchmarks, parsed one way (node:util's parseArgs, so the same in
// Deno and Node): `--name value` or `--name=value`, flags without a value, unknown options and
// stray arguments rejected with the list of known ones.
//
// Every benchmark also takes `--smoke`: a seconds-long run over tiny inputs (each option's
// `smoke` value, unless the option is given explicitly), one repetition, writing its report under
// test-results/bench-smoke/ instead of docs/, and ending with one result line,
//   [bench:smoke] <name> ok: <summary>
// which scripts/bench-smoke.sh (the `bench` tier of npm test) looks for.
import { mkdirSync } from 'node:fs';
import process from 'node:process';
import { parseArgs } from 'node:util';

export type OptionSpec =
  | { type: 'number'; default?: number; smoke?: number; help?: string }
  | { type: 'string'; default?: string; smoke?: string; help?: string }
  | { type: 'boolean'; smoke?: boolean; help?: string };

type ValueOf<O> = O extends { type: 'boolean' }
  ? boolean
  : O extends { type: 'number'; default: number }
    ? number
    : O extends { type: 'number' }
      ? number | undefined
      : O extends { type: 'string'; default: string }
        ? string
        : string | undefined;

export type Values<S extends Record<string, OptionSpec>> = { [K in keyof S]: ValueOf<S[K]> };

export interface BenchArgs<S extends Record<string, OptionSpec>> {
  /** Each option's value: given, else its smoke value in a smoke run, else its default. */
  values: Values<S>;
  /** Whether --smoke was given. */
  smoke: boolean;
  /** The arguments as given (for the "Command:" line of a report). */
  argv: string[];
  /** Whether the option was given on the command line. */
  given(name: keyof S & string): boolean;
  /** Prints the result line of a smoke run (nothing otherwise); call it once, at the very end. */
  done(summary: string): void;
}

const root = new URL('../../', import.meta.url).pathname;

/** Where a smoke run writes the report it would write into docs/ (an absolute path). */
export const smokeDir = `${root}test-results/bench-smoke`;
export const smokeOut = (file: string): string => `${smokeDir}/${file}`;

function usage(name: string, spec: Record<string, OptionSpec>): string {
  const lines = Object.entries(spec).map(([k, o]) => {
    const arg = o.type === 'boolean' ? '' : o.type === 'number' ? ' N' : ' TEXT';
    const dflt = 'default' in o && o.default !== undefined ? ` (default ${o.default})` : '';
    const smoke = o.smoke !== undefined ? `; --smoke: ${o.smoke}` : '';
    return `  --${k}${arg}${dflt}${smoke}${o.help ? `  ${o.help}` : ''}`;
  });
  return [
    `usage: npx deno run -A bench/${name}.ts [options]`,
    ...lines,
    '  --smoke  a seconds-long run on tiny inputs, 1 repetition, no writes into docs/',
  ].join('\n');
}

/**
 * Parses `argv` (default: this process's arguments) against `spec`. A bad command line prints
 * the error and the options, and exits with status 2; `--help` prints the options and exits with
 * status 0 (after checking the rest of the command line).
 */
export function benchArgs<const S extends Record<string, OptionSpec>>(
  name: string,
  spec: S,
  argv: string[] = process.argv.slice(2),
): BenchArgs<S> {
  const options: Record<string, { type: 'string' | 'boolean' }> = { smoke: { type: 'boolean' }, help: { type: 'boolean' } };
  for (const [k, o] of Object.entries(spec)) options[k] = { type: o.type === 'boolean' ? 'boolean' : 'string' };
  let parsed: Record<string, string | boolean | undefined>;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as typeof parsed;
  } catch (e) {
    console.error(`bench/${name}.ts: ${(e as Error).message}\n${usage(name, spec)}`);
    process.exit(2);
  }
  const smoke = parsed.smoke === true;
  const values: Record<string, number | string | boolean | undefined> = {};
  for (const [k, o] of Object.entries(spec)) {
    const raw = parsed[k];
    if (o.type === 'boolean') values[k] = raw === true || (raw === undefined && smoke && o.smoke === true);
    else if (raw === undefined) values[k] = smoke && o.smoke !== undefined ? o.smoke : o.default;
    else if (o.type === 'string') values[k] = raw as string;
    else {
      const n = Number(raw);
      if (raw === '' || !Number.isFinite(n)) {
        console.error(`bench/${name}.ts: --${k} wants a number, got '${raw}'\n${usage(name, spec)}`);
        process.exit(2);
      }
      values[k] = n;
    }
  }
  if (parsed.help) {
    console.log(usage(name, spec));
    process.exit(0);
  }
  if (smoke) mkdirSync(smokeDir, { recursive: true });
  return {
    values: values as Values<S>,
    smoke,
    argv: [...argv],
    given: (k) => parsed[k] !== undefined,
    done(summary) {
      if (smoke) console.log(`[bench:smoke] ${name} ok: ${summary}`);
    },
  };
}
