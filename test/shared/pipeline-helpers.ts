/** Tiny runtime-agnostic helpers for the pipeline scenarios (no node:assert, no test framework). */

export function assert(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(`assertion failed: ${msg}`);
}

export function assertEqual<T>(actual: T, expected: T, msg: string): void {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`assertion failed: ${msg}\n  actual:   ${a}\n  expected: ${e}`);
}

export async function assertRejects(p: Promise<unknown>, check: (e: unknown) => boolean, msg: string): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    if (!check(e)) throw new Error(`assertion failed: ${msg}: wrong error ${String(e)}`);
    return e;
  }
  throw new Error(`assertion failed: ${msg}: did not reject`);
}

/** Sleeps `ms`, rejecting at once when `signal` aborts; leaves no timer behind either way. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Counts tasks started / settled and timers pending, to prove a stop leaves nothing running. */
export class Probe {
  started = 0;
  settled = 0;
  timers = 0;

  async task<T>(ms: number, signal: AbortSignal, value: T): Promise<T> {
    this.started++;
    this.timers++;
    try {
      await sleep(ms, signal);
      return value;
    } finally {
      this.timers--;
      this.settled++;
    }
  }

  get live(): number {
    return this.started - this.settled;
  }
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
