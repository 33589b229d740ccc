// Command-line arguments of the `tandem` commands, through node:util's parseArgs (Node and Deno
// alike): each command declares its options; an unknown option or a bad value is a UsageError,
// which main.ts prints as one line with exit code 2.
import { parseArgs } from 'node:util';
import { TandemError } from '../errors/index.ts';
import { exists } from '../runtime/index.ts';

/** A mistake in how the command was called: reported as one line, exit code 2. */
export class UsageError extends TandemError {
  readonly code = 'usage';
  override readonly name = 'UsageError';
}

type Kind = 'string' | 'boolean';

/** The options each command takes (besides --help and --verbose, which all take). */
export const COMMAND_OPTIONS: Record<string, Record<string, Kind>> = {
  train: {
    data: 'string',
    shards: 'string',
    parquet: 'string',
    hf: 'string',
    split: 'string',
    images: 'string',
    epochs: 'string',
    batch: 'string',
    threads: 'string',
    seed: 'string',
    lr: 'string',
    augment: 'boolean',
    'no-augment': 'boolean',
    report: 'string',
    checkpoint: 'string',
    'checkpoint-every': 'string',
    resume: 'string',
    weights: 'string',
    'save-weights': 'string',
    progress: 'string',
    text: 'string',
    tokens: 'string',
    generated: 'string',
    tokenizer: 'string',
    steps: 'string',
    'seq-len': 'string',
    pack: 'string',
    'eval-every': 'string',
    prompt: 'string',
  },
  bench: { data: 'string', images: 'string', epochs: 'string', batch: 'string', size: 'string', threads: 'string' },
  smoke: { data: 'string', images: 'string', epochs: 'string', batch: 'string', size: 'string', threads: 'string' },
  profile: { data: 'string', images: 'string', batch: 'string', size: 'string', threads: 'string', concurrency: 'string' },
  parquet: {
    data: 'string',
    out: 'string',
    text: 'boolean',
    'rows-per-group': 'string',
    'rows-per-file': 'string',
    compression: 'string',
    config: 'string',
    split: 'string',
  },
  shards: {
    data: 'string',
    out: 'string',
    'shard-size': 'string',
    'per-shard': 'string',
    seed: 'string',
    'no-shuffle': 'boolean',
    prefix: 'string',
  },
};

export interface ParsedArgs {
  command: string;
  /** Given options by name; booleans as 'true'. */
  flags: Map<string, string>;
  verbose: boolean;
}

/** Splits `argv` into the command and its options; throws UsageError for anything unknown. */
export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  const command = argv[0] !== undefined && !argv[0].startsWith('-') ? argv[0] : '';
  const spec = COMMAND_OPTIONS[command] ?? {};
  const kinds: Record<string, Kind> = { ...spec, help: 'boolean', verbose: 'boolean' };
  const options: Record<string, { type: Kind }> = {};
  for (const [name, type] of Object.entries(kinds)) options[name] = { type };
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: argv.slice(command ? 1 : 0) as string[], options, strict: true, allowPositionals: false }) as {
      values: Record<string, string | boolean | undefined>;
    });
  } catch (error) {
    // parseArgs' messages name the option ("Unknown option '--bogus'"); keep only that line.
    const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    throw new UsageError(`${message}${command ? ` (tandem ${command} --help lists the options)` : ''}`);
  }
  const flags = new Map<string, string>();
  for (const [name, value] of Object.entries(values)) if (value !== undefined && value !== false) flags.set(name, String(value));
  return { command, flags, verbose: flags.has('verbose') };
}

/** A positive number option (integer unless `integer` is false), or `fallback` when absent. */
export function numberFlag(flags: Map<string, string>, name: string, fallback: number, integer = true): number {
  const raw = flags.get(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!(value > 0) || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    throw new UsageError(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** A folder option that must exist, or undefined when absent. */
export async function folderFlag(flags: Map<string, string>, name: string): Promise<string | undefined> {
  const path = flags.get(name);
  if (path === undefined) return undefined;
  if (/^https?:\/\//.test(path)) return path;
  if (!(await exists(path))) throw new UsageError(`--${name} ${path}: no such file or folder`);
  return path;
}
