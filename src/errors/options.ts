// Options are checked where they enter, before anything is allocated, and a bad one is named with
// the value it had: `loader options.threads must be a positive integer (got NaN)`. One class for
// every public entry point, so a caller can tell a wrong call from a bad input file.
import { TandemError } from './base.ts';

/** An option of a public call is missing, of the wrong type, out of range, or not an option at all. */
export class OptionError extends TandemError {
  override readonly name = 'OptionError';
  readonly code = 'invalid-option';
  constructor(
    /** Where the option was given, e.g. `loader options` or `DecodePool.create options`. */
    readonly where: string,
    /** The option's name, dotted for nested ones (`decode.maxPixels`). */
    readonly field: string,
    readonly value: unknown,
    expected: string,
  ) {
    super(`${where}.${field} must be ${expected} (got ${show(value)})`);
  }
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value == null) return String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'function') return 'a function';
  const name = (value as { constructor?: { name?: string } }).constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : 'an object';
}

/**
 * Checks the options object of one call: `where` names the call in every message. Each check
 * returns the value (or the default when it is undefined), so a call reads its options through it.
 */
export class OptionChecker {
  readonly #options: Record<string, unknown>;
  constructor(
    readonly where: string,
    options: unknown,
    known: readonly string[],
  ) {
    if (options === undefined) options = {};
    if (typeof options !== 'object' || options === null || Array.isArray(options))
      throw new OptionError(where.replace(/ options$/, ''), 'options', options, 'an object');
    this.#options = options as Record<string, unknown>;
    for (const key of Object.keys(this.#options)) {
      if (!known.includes(key) && this.#options[key] !== undefined)
        throw new OptionError(where, key, this.#options[key], `one of the known options (${known.join(', ')})`);
    }
  }

  fail(field: string, expected: string): never {
    throw new OptionError(this.where, field, this.#options[field], expected);
  }

  raw(field: string): unknown {
    return this.#options[field];
  }

  /** A whole number in [min, max]. */
  integer(field: string, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.#options[field] ?? fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      this.fail(field, min === 1 && max === Number.MAX_SAFE_INTEGER ? 'a positive integer' : `an integer in [${min}, ${max}]`);
    return v;
  }

  optionalInteger(field: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
    return this.#options[field] === undefined ? undefined : this.integer(field, 0, min, max);
  }

  /** A finite number in [min, max]. */
  number(field: string, fallback: number, min = -Infinity, max = Infinity): number {
    const v = this.#options[field] ?? fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) this.fail(field, `a finite number in [${min}, ${max}]`);
    return v;
  }

  boolean(field: string, fallback: boolean): boolean {
    const v = this.#options[field] ?? fallback;
    if (typeof v !== 'boolean') this.fail(field, 'true or false');
    return v;
  }

  oneOf<const T extends string>(field: string, fallback: NoInfer<T>, allowed: readonly T[]): T {
    const v = this.#options[field] ?? fallback;
    if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v))
      this.fail(field, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`);
    return v as T;
  }

  /** `count` finite numbers (per-channel mean, std), each above `above` when given. */
  numbers(field: string, count: number, above = -Infinity): readonly number[] | undefined {
    const v = this.#options[field];
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.length < count || v.some((x) => typeof x !== 'number' || !Number.isFinite(x) || x <= above))
      this.fail(field, `an array of ${count} finite numbers${above > -Infinity ? ` above ${above}` : ''}`);
    return v as number[];
  }

  signal(field = 'signal'): AbortSignal | undefined {
    const v = this.#options[field];
    if (v === undefined) return undefined;
    if (typeof v !== 'object' || v === null || typeof (v as AbortSignal).aborted !== 'boolean') this.fail(field, 'an AbortSignal');
    return v as AbortSignal;
  }
}
