// One HTTP request with the sources room's retry rules (FetchOptions: per-attempt timeout, retries,
// exponential backoff, the caller's signal), for the two requests whose answer is more than a body:
// the Hub's listings (status, Link and Retry-After headers, JSON) and the first read of a remote
// Parquet file (a suffix range whose Content-Range gives the file's size with its footer). Byte
// ranges after that go through fetchBytes itself.
import { FetchError, type FetchErrorCode, type FetchOptions } from '../sources/index.ts';
import { readWithin, retryAfterMs, transientStatus, waitBeforeRetry } from '../sources/internal.ts';

/** The per-attempt limit when the caller sets none: a stalled connection fails and is retried. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** What `accept` returns: a value, or a failure that another attempt may or may not cure. */
export type Attempt<T> = { value: T } | AttemptFailure;
export interface AttemptFailure {
  retry: boolean;
  code: FetchErrorCode;
  status?: number;
  message: string;
  retryAfterMs?: number;
  /** The Hub's `X-Error-Code` (RepoNotFound, GatedRepo, …), which tells apart answers of one status. */
  errorCode?: string;
}

/** The status's failure: 5xx, 408 and 429 are worth another attempt, other statuses are answers. */
export function statusFailure(response: Response): AttemptFailure {
  void response.body?.cancel().catch(() => undefined); // free the connection
  return {
    retry: transientStatus(response.status),
    code: 'http',
    status: response.status,
    message: `HTTP ${response.status} ${response.statusText}`.trim(),
    retryAfterMs: response.status === 429 ? retryAfterMs(response) : undefined,
    errorCode: response.headers.get('x-error-code') ?? undefined,
  };
}

/**
 * GETs `url` until `accept` takes an answer, an answer is final, or retries run out; then throws a
 * FetchError with the last status (`finalError` may turn a final failure into the caller's own
 * error). A 429 waits its Retry-After (up to a minute: waitBeforeRetry) instead of the backoff.
 */
export async function getWithRetries<T>(
  url: string,
  options: FetchOptions & { extraHeaders?: Record<string, string> },
  accept: (response: Response) => Promise<Attempt<T>>,
  finalError?: (last: AttemptFailure, attempts: number) => Error | undefined,
): Promise<T> {
  const { timeoutMs = DEFAULT_TIMEOUT_MS, retries = 3, signal } = options;
  let last: AttemptFailure | undefined;
  let attempts = 0;
  while (attempts <= retries) {
    if (attempts > 0 && !(await waitBeforeRetry(attempts, last?.retryAfterMs, options))) break;
    signal?.throwIfAborted();
    attempts++;
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => controller.abort(new DOMException('timeout', 'TimeoutError')), timeoutMs);
    try {
      const headers = new Headers(options.headers);
      for (const [name, value] of Object.entries(options.extraHeaders ?? {})) headers.set(name, value);
      const response = await fetch(url, { headers, signal: controller.signal });
      const result = await accept(response);
      if ('value' in result) return result.value;
      last = result;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const timedOut = controller.signal.aborted;
      last = timedOut
        ? { retry: true, code: 'timeout', message: `timed out after ${timeoutMs} ms` }
        : { retry: true, code: 'network', message: `network error: ${String(error)}` };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    if (!last.retry) break;
  }
  const failure: AttemptFailure = last ?? { retry: false, code: 'network', message: 'no attempt was made' };
  const own = finalError?.(failure, attempts);
  if (own) throw own;
  throw new FetchError(url, failure.status, attempts, `GET ${url} failed after ${attempts} attempt(s): ${failure.message}`, failure.code);
}

/** A body read whole, or undefined when it declares or grows past `maxBytes` (then cancelled). */
export async function readLimited(response: Response, maxBytes: number): Promise<Uint8Array | undefined> {
  const read = await readWithin(response, maxBytes);
  return 'bytes' in read ? read.bytes : undefined;
}
