// Fetching bytes over HTTP(S) the way a training job needs it: transient failures (network errors,
// 5xx, 429, timeouts, bodies cut short) are retried with exponential backoff (or after a 429's or
// 503's Retry-After, up to a minute); a 4xx is an answer and is not; each attempt has its own
// timeout; large files can be read in ranges.
import { TandemError } from '../errors/index.ts';

export interface FetchOptions {
  /** Per-attempt limit in ms, covering the response headers and (for fetchBytes) the body. */
  timeoutMs?: number;
  /** Retries after the first attempt (so attempts ≤ retries + 1). */
  retries?: number;
  /** Delay before the first retry; it doubles each time, capped at maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Aborting stops at once, with no further retries. */
  signal?: AbortSignal;
  /** Inclusive byte range, as HTTP counts it; end omitted = to the end of the file. */
  range?: { start: number; end?: number };
  headers?: Record<string, string>;
  /**
   * fetchBytes: the most bytes a body may have (default DEFAULT_MAX_FETCH_BYTES). A declared
   * Content-Length over it fails before the body is read, a body that grows past it fails while
   * it is read; either way a FetchError with code 'too-large', not retried.
   */
  maxBytes?: number;
  /**
   * The ETag the file had when it was first read. An answer with another ETag fails
   * with code 'changed' (not retried): the ranges of two versions of a file must not be mixed.
   */
  etag?: string;
}

/** fetchBytes' default body limit: 256 MiB. */
export const DEFAULT_MAX_FETCH_BYTES = 256 * 1024 * 1024;

/**
 * Why a fetch failed, for the last attempt: 'http' (the server answered with an error status or
 * not what was asked), 'timeout', 'network' (no answer, or a body cut short), 'too-large' (the body
 * is over maxBytes), 'changed' (the file's ETag is no longer `etag`).
 */
export type FetchErrorCode = 'http' | 'timeout' | 'network' | 'too-large' | 'changed';

export class FetchError extends TandemError {
  override readonly name = 'FetchError';
  constructor(
    readonly url: string,
    /** The last HTTP status, or undefined when no response came (network error, timeout). */
    readonly status: number | undefined,
    readonly attempts: number,
    message: string,
    readonly code: FetchErrorCode,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Thrown inside one attempt; `retry` says whether another attempt could help. */
class AttemptError extends Error {
  /** The server's Retry-After (a 429 or 503), waited for instead of the backoff. */
  retryAfterMs: number | undefined;
  constructor(
    message: string,
    readonly retry: boolean,
    readonly code: FetchErrorCode,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** 5xx, 408 and 429 are worth another attempt; other statuses are answers. */
export const transientStatus = (status: number) => status >= 500 || status === 429 || status === 408;

/** A 429's or 503's Retry-After in ms (seconds or an HTTP date), or undefined when absent or unreadable. */
export function retryAfterMs(response: Response): number | undefined {
  const header = response.headers.get('retry-after');
  if (header === null) return undefined;
  const seconds = Number(header);
  if (header.trim() !== '' && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

/** The longest Retry-After waited for; a server asking for more is answered with an error at once. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * The wait before attempt `attempts + 1`, for every retry loop: the server's Retry-After when it
 * sent one, else the exponential backoff. Resolves false, at once, when the server asks for longer
 * than MAX_RETRY_AFTER_MS: the caller gives up.
 */
export async function waitBeforeRetry(
  attempts: number,
  retryAfterMs: number | undefined,
  options: Pick<FetchOptions, 'backoffMs' | 'maxBackoffMs' | 'signal'>,
): Promise<boolean> {
  const { backoffMs = 100, maxBackoffMs = 10_000, signal } = options;
  const wait = retryAfterMs ?? Math.min(maxBackoffMs, backoffMs * 2 ** (attempts - 1));
  if (wait > MAX_RETRY_AFTER_MS) return false;
  await sleep(wait, signal);
  return true;
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts (a retry's backoff). */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * One attempt's signal: aborts on the caller's signal or after timeoutMs. A manual controller rather
 * than AbortSignal.any/timeout so that it can be disarmed once a stream's headers are in, and so
 * that a timeout is told apart from the caller's abort.
 */
function attemptSignal(timeoutMs: number | undefined, outer: AbortSignal | undefined) {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onAbort, { once: true });
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError'));
        }, timeoutMs);
  const disarm = (what: 'timer' | 'all') => {
    clearTimeout(timer);
    if (what === 'all') outer?.removeEventListener('abort', onAbort);
  };
  return { signal: controller.signal, timedOut: () => timedOut, disarm };
}

function rangeHeader(range: FetchOptions['range']): string | undefined {
  if (!range) return undefined;
  if (!(range.start >= 0) || (range.end !== undefined && range.end < range.start))
    throw new RangeError(`bad range ${JSON.stringify(range)}`);
  return `bytes=${range.start}-${range.end ?? ''}`;
}

/**
 * Runs attempts until one succeeds, a failure is not worth retrying, or retries run out.
 * `streaming`: on success only the timer is disarmed, so the caller's signal still cancels the body.
 */
async function withRetries<T>(
  url: string,
  options: FetchOptions,
  attempt: (signal: AbortSignal) => Promise<T>,
  streaming: boolean,
): Promise<T> {
  const { timeoutMs, retries = 3, signal } = options;
  let last: AttemptError | undefined;
  let attempts = 0;
  while (attempts <= retries) {
    if (attempts > 0 && !(await waitBeforeRetry(attempts, last?.retryAfterMs, options))) break;
    signal?.throwIfAborted();
    attempts++;
    const guard = attemptSignal(timeoutMs, signal);
    let ok = false;
    try {
      const value = await attempt(guard.signal);
      ok = true;
      return value;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof AttemptError) last = error;
      else if (guard.timedOut()) last = new AttemptError(`timed out after ${timeoutMs} ms`, true, 'timeout', undefined, { cause: error });
      // fetch rejects with a TypeError for network failures; a body cut short rejects while reading.
      else last = new AttemptError(`network error: ${String(error)}`, true, 'network', undefined, { cause: error });
      if (!last.retry) break;
    } finally {
      guard.disarm(streaming && ok ? 'timer' : 'all');
    }
  }
  throw new FetchError(
    url,
    last?.status,
    attempts,
    `GET ${url} failed after ${attempts} attempt(s): ${last?.message ?? 'unknown'}`,
    last?.code ?? 'network',
    { cause: last },
  );
}

async function request(url: string, options: FetchOptions, signal: AbortSignal): Promise<Response> {
  const headers = new Headers(options.headers);
  const range = rangeHeader(options.range);
  if (range) headers.set('Range', range);
  const response = await fetch(url, { headers, signal });
  const fail = (message: string, retry: boolean, code: FetchErrorCode = 'http') => {
    const error = new AttemptError(message, retry, code, response.status);
    if (response.status === 429 || response.status === 503) error.retryAfterMs = retryAfterMs(response);
    void response.body?.cancel().catch(() => undefined); // free the connection
    return error;
  };
  // Before the status: a cache's own If-Range turns a range of a changed file into a 200.
  const etag = response.headers.get('etag');
  if (response.ok && options.etag !== undefined && etag !== null && !sameEtag(etag, options.etag))
    throw fail(`the file changed: its ETag is ${etag}, it was ${options.etag}`, false, 'changed');
  if (range && response.status === 200) throw fail(`asked for ${range} but the server sent the whole file (200, not 206)`, false);
  if (!response.ok) throw fail(`HTTP ${response.status} ${response.statusText}`, transientStatus(response.status));
  return response;
}

/** The whole body, refusing more than `maxBytes` before reading (declared) or while reading. */
/**
 * A body read whole, refusing more than `maxBytes` before reading (a declared Content-Length) or
 * while reading: the bytes, or why not ('declared N' / 'grew past N'), the body cancelled.
 */
export async function readWithin(response: Response, maxBytes: number): Promise<{ bytes: Uint8Array } | { over: string }> {
  const declared = response.headers.get('content-length');
  if (declared !== null && !response.headers.has('content-encoding') && Number(declared) > maxBytes) {
    void response.body?.cancel().catch(() => undefined);
    return { over: `the body declares ${declared} bytes` };
  }
  if (!response.body) return { bytes: new Uint8Array(0) };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      void reader.cancel().catch(() => undefined);
      return { over: `the body grew past ${total - value.length} bytes` };
    }
    chunks.push(value);
  }
  if (chunks.length === 1 && chunks[0]) return { bytes: chunks[0] };
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return { bytes };
}

async function readBody(response: Response, maxBytes: number): Promise<Uint8Array> {
  const read = await readWithin(response, maxBytes);
  if ('over' in read) throw new AttemptError(`${read.over}, over maxBytes ${maxBytes}`, false, 'too-large', response.status);
  return read.bytes;
}

/** ETags compared weakly (RFC 9110 8.8.3.2): the same opaque tag, whether or not either is marked W/. */
const sameEtag = (a: string, b: string) => a.trim().replace(/^W\//, '') === b.trim().replace(/^W\//, '');

/**
 * GETs a URL (or a byte range of it) into memory. Retries transient failures, including a body
 * shorter than its Content-Length; throws FetchError with the last status and the attempt count.
 */
export async function fetchBytes(url: string, options: FetchOptions = {}): Promise<Uint8Array> {
  return withRetries(
    url,
    options,
    async (signal) => {
      const response = await request(url, options, signal);
      const bytes = await readBody(response, options.maxBytes ?? DEFAULT_MAX_FETCH_BYTES);
      const declared = response.headers.get('content-length');
      // With Content-Encoding the header counts compressed bytes, so it can only be checked without.
      if (declared !== null && !response.headers.has('content-encoding') && Number(declared) !== bytes.length)
        throw new AttemptError(`body has ${bytes.length} of ${declared} bytes`, true, 'network', response.status);
      const { range } = options;
      if (range?.end !== undefined && bytes.length !== range.end - range.start + 1) {
        throw new AttemptError(`range ${range.start}-${range.end} returned ${bytes.length} bytes`, false, 'http', response.status);
      }
      return bytes;
    },
    false,
  );
}

/**
 * Opens a URL as a byte stream (for tar shards): retries until the response headers arrive, then
 * hands over the body. The timeout covers only the wait for headers — a shard may take minutes to
 * stream — and a failure later in the body surfaces to the reader (a tar reader reports it as a
 * truncated shard).
 */
export async function fetchStream(url: string, options: FetchOptions = {}): Promise<ReadableStream<Uint8Array>> {
  const response = await withRetries(url, options, (signal) => request(url, options, signal), true);
  if (!response.body) throw new FetchError(url, response.status, 1, `GET ${url}: response has no body`, 'http');
  return response.body;
}

/**
 * Random access to a remote file through range requests (for streamed video decoding: it has the
 * shape of the decode room's ByteSource). `size` comes from a HEAD request's Content-Length. Reads
 * go through fetchBytes (retries, backoff, timeouts, exact lengths) when the size is known; without
 * it, through fetchStream, where the last range may come back short and one past the end is empty.
 */
export async function httpByteSource(
  url: string | URL,
  options: FetchOptions = {},
): Promise<{ size?: number; read(offset: number, length: number): Promise<Uint8Array> }> {
  const href = String(url);
  const head = await fetch(href, { method: 'HEAD', signal: options.signal, headers: options.headers });
  if (!head.ok) throw new FetchError(href, head.status, 1, `HEAD ${href}: HTTP ${head.status}`, 'http');
  return rangeReader(href, declaredSize(head), options);
}

function declaredSize(head: Response): number | undefined {
  const declared = head.headers.get('content-length');
  return declared !== null && Number(declared) >= 0 ? Number(declared) : undefined;
}

/**
 * Ranged reads of an http(s) URL whose server says it takes them (a HEAD answered with
 * `Accept-Ranges: bytes` and a Content-Length); undefined for any other answer or failure, where
 * the caller fetches the whole file instead.
 */
export async function rangedUrlSource(
  url: string,
  options: FetchOptions = {},
): Promise<{ size: number; remote: true; read(offset: number, length: number): Promise<Uint8Array>; close(): Promise<void> } | undefined> {
  if (!/^https?:/i.test(url)) return undefined;
  let head: Response;
  const controller = new AbortController();
  const stop = () => controller.abort();
  const timer = setTimeout(stop, options.timeoutMs ?? 30_000);
  options.signal?.addEventListener('abort', stop, { once: true });
  try {
    head = await fetch(url, { method: 'HEAD', headers: options.headers, signal: controller.signal });
  } catch (error) {
    options.signal?.throwIfAborted();
    return undefined;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', stop);
  }
  if (!head.ok) return undefined;
  const size = declaredSize(head);
  if (size === undefined || !/\bbytes\b/i.test(head.headers.get('accept-ranges') ?? '')) return undefined;
  return { ...rangeReader(url, size, options), size, remote: true, close: async () => {} };
}

function rangeReader(
  href: string,
  size: number | undefined,
  options: FetchOptions,
): { size?: number; read(offset: number, length: number): Promise<Uint8Array> } {
  return {
    size,
    async read(offset, length) {
      if (size !== undefined) {
        const end = Math.min(offset + length, size) - 1;
        return end < offset ? new Uint8Array(0) : fetchBytes(href, { ...options, range: { start: offset, end } });
      }
      let body: ReadableStream<Uint8Array>;
      try {
        body = await fetchStream(href, { ...options, range: { start: offset, end: offset + length - 1 } });
      } catch (error) {
        if (error instanceof FetchError && error.status === 416) return new Uint8Array(0);
        throw error;
      }
      const bytes = new Uint8Array(await new Response(body).arrayBuffer());
      return bytes.length > length ? bytes.subarray(0, length) : bytes;
    },
  };
}
