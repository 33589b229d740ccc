// Sources of bytes from lists of URLs or local paths, with a bound on requests in flight. Every
// input comes out once, in input order: as its bytes, or as a failure naming the stage and reason.
import { asError, type Failed, isFailure } from '../errors/index.ts';
import { readFile } from '../runtime/index.ts';
import type { ByteCache } from './cache.ts';
import { fetchBytes, FetchError, type FetchOptions } from './urls.ts';

/** loadUrls/urlStage's default body limit per item (an image or a clip): 64 MiB; fetch.maxBytes overrides it. */
export const DEFAULT_MAX_ITEM_BYTES = 64 * 1024 * 1024;

export type LoadStage = 'fetch' | 'read' | 'cache';

export interface Loaded<T> {
  item: T;
  key: string;
  bytes: Uint8Array;
  /** True when the bytes came from the cache, not the network. */
  cached: boolean;
}
/** An item whose bytes could not be had: `stage` says at which step. */
export interface LoadFailure<T> extends Failed<LoadStage> {
  item: T;
  /** Short and stable enough to count by: "HTTP 404", "timeout", "network", "ENOENT"... */
  reason: string;
}
export type LoadResult<T> = Loaded<T> | LoadFailure<T>;

export interface LoadOptions {
  /** Loads in flight at once (default 8 for URLs, 16 for files). */
  concurrency?: number;
  signal?: AbortSignal;
}
export interface UrlLoadOptions<T> extends LoadOptions {
  /** The URL of an item (default: the item itself, as a string). */
  url?: (item: T) => string;
  fetch?: FetchOptions;
  cache?: ByteCache;
}
export interface FileLoadOptions<T> extends LoadOptions {
  path?: (item: T) => string;
}

function reasonOf(error: unknown): string {
  if (error instanceof FetchError) return error.code === 'http' && error.status !== undefined ? `HTTP ${error.status}` : error.code;
  const code = (error as { code?: unknown; name?: unknown }).code ?? (error as { name?: unknown }).name;
  return typeof code === 'string' ? code : 'error';
}

/**
 * Maps items through an async load with at most `concurrency` running, yielding in input order.
 * Only the window of in-flight items is held, so any number of inputs streams through.
 */
async function* bounded<T>(
  items: Iterable<T> | AsyncIterable<T>,
  concurrency: number,
  load: (item: T) => Promise<LoadResult<T>>,
): AsyncGenerator<LoadResult<T>> {
  if (!(concurrency >= 1)) throw new RangeError(`concurrency ${concurrency} must be ≥ 1`);
  const window: Array<Promise<LoadResult<T>>> = [];
  for await (const item of items) {
    const pending = load(item);
    // Marked handled: after an abort every pending load rejects, but only the first is awaited.
    pending.catch(() => undefined);
    window.push(pending);
    if (window.length >= concurrency) yield await window.shift()!;
  }
  while (window.length > 0) yield await window.shift()!;
}

/** One URL's bytes through the cache (if any) and fetchBytes; never throws, except on abort. */
export async function loadUrl<T>(item: T, options: UrlLoadOptions<T> = {}): Promise<LoadResult<T>> {
  const key = options.url ? options.url(item) : String(item);
  let stage: LoadStage = 'cache';
  try {
    const hit = await options.cache?.get(key);
    if (hit) return { item, key, bytes: hit, cached: true };
    stage = 'fetch';
    const bytes = await fetchBytes(key, {
      timeoutMs: 30_000,
      maxBytes: DEFAULT_MAX_ITEM_BYTES,
      ...options.fetch,
      signal: options.signal ?? options.fetch?.signal,
    });
    stage = 'cache';
    await options.cache?.put(key, bytes);
    return { item, key, bytes, cached: false };
  } catch (error) {
    if (options.signal?.aborted) throw error;
    return { item, key, stage, reason: reasonOf(error), error: asError(error) };
  }
}

/** Fetches each URL (retries, timeouts, cache) with at most `concurrency` requests in flight. */
export function loadUrls<T>(items: Iterable<T> | AsyncIterable<T>, options: UrlLoadOptions<T> = {}): AsyncGenerator<LoadResult<T>> {
  return bounded(items, options.concurrency ?? 8, (item) => loadUrl(item, options));
}

/** Reads each local file (Node, Deno) with at most `concurrency` reads in flight. */
export function loadFiles<T>(items: Iterable<T> | AsyncIterable<T>, options: FileLoadOptions<T> = {}): AsyncGenerator<LoadResult<T>> {
  return bounded(items, options.concurrency ?? 16, async (item) => {
    const key = options.path ? options.path(item) : String(item);
    try {
      return { item, key, bytes: await readFile(key), cached: false };
    } catch (error) {
      return { item, key, stage: 'read', reason: reasonOf(error), error: asError(error) };
    }
  });
}

/**
 * For pipelines that prefer their own failure report: a stage function that returns the bytes and
 * throws the failure (the pipeline lists it with its stage name). Use `pipe(fn, { concurrency })`.
 */
export function urlStage<T>(
  options: Omit<UrlLoadOptions<T>, 'concurrency'> = {},
): (item: T, context: { signal: AbortSignal }) => Promise<Loaded<T>> {
  return async (item, { signal }) => {
    const result = await loadUrl(item, { ...options, signal });
    if (isFailure(result)) throw Object.assign(result.error, { stage: result.stage, reason: result.reason });
    return result;
  };
}
