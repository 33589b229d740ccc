// A tiny assertion kit usable from vitest, Deno and the browser alike.

export class CheckError extends Error {
  override readonly name = 'CheckError';
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CheckError(message);
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let worst = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs((a[i] ?? 0) - (b[i] ?? 0)));
  return a.length === b.length ? worst : Infinity;
}

/** Equal as JSON: for plain data (arrays, records, counts). */
export function assertEqual<T>(actual: T, expected: T, message: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new CheckError(`${message}\n  actual:   ${a}\n  expected: ${e}`);
}

export async function rejectsWith(promise: Promise<unknown>, predicate: (error: unknown) => boolean, message: string): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    check(predicate(error), `${message}: got ${String(error)}`);
    return error;
  }
  throw new CheckError(`${message}: it resolved`);
}

/** Resolves with `promise`, or rejects after `ms`: a wait that hangs must fail the test, not hang the tier. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
