// Random access to one Parquet file, wherever it is: a local path (Node, Deno) through the runtime's
// file ranges, a browser File or Blob through slice(), a URL through HTTP Range requests. Every
// failure is a ParquetError `open` naming the file, with the runtime's or the network's error as
// its cause.
import { asError } from '../errors/index.ts';
import { type FileRange, openFileRange } from '../runtime/index.ts';
import { FetchError, type FetchOptions, fetchBytes } from '../sources/index.ts';
import { ParquetError } from './errors.ts';
import { DEFAULT_TIMEOUT_MS, getWithRetries, readLimited, statusFailure } from './http.ts';
import { HubError } from './hub.ts';

/** A local path or file: URL (Node, Deno), an http(s) or blob: URL, or a browser File/Blob. */
export type ParquetInput = string | Blob;

export interface ByteSource {
  /** The display name: the path or URL as given, or the File's name. */
  readonly name: string;
  readonly size: number;
  /** The file's last bytes, when opening read them already (the HTTP probe does; else empty). */
  readonly tail: Uint8Array;
  /** Exactly the bytes [start, end), or a ParquetError `open`. */
  read(start: number, end: number, signal?: AbortSignal): Promise<Uint8Array>;
  close(): Promise<void>;
}

const isUrl = (input: string) => /^(https?|blob):/i.test(input);

export function displayName(input: ParquetInput, index: number): string {
  if (typeof input === 'string') return input;
  const name = (input as { name?: unknown }).name;
  return typeof name === 'string' && name !== '' ? name : `blob #${index}`;
}

function anySignal(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  return a && b ? AbortSignal.any([a, b]) : (a ?? b);
}

function shortRead(name: string, start: number, end: number, got: number): ParquetError {
  return new ParquetError('open', name, `reading bytes ${start}-${end} gave ${got} bytes: the file changed while it was read`);
}

/** What a read failure says: an http status gets a hint, a 416 a HubError `range` as its cause. */
function readFailure(name: string, error: unknown): ParquetError {
  if (error instanceof ParquetError) return error;
  if (error instanceof FetchError && error.status === 416) {
    const range = new HubError('range', error.url, `${error.url}: the server has no such byte range (416)`, 416, undefined, {
      cause: error,
    });
    return new ParquetError(
      'open',
      name,
      'the server refused a byte range (416): the file is shorter than its footer says, or it changed',
      {
        cause: range,
      },
    );
  }
  if (error instanceof FetchError && error.code === 'changed')
    return new ParquetError('open', name, `the file changed after it was opened (${error.message}): its ranges would mix two versions`, {
      cause: error,
    });
  if (error instanceof FetchError && (error.status === 401 || error.status === 403))
    return new ParquetError(
      'open',
      name,
      `HTTP ${error.status}: the server wants credentials (a gated Hub dataset needs its token: fetch.headers.Authorization)`,
      { cause: error },
    );
  return new ParquetError('open', name, `cannot read: ${asError(error).message}`, { cause: error });
}

/**
 * A local file, open only while reads of it are in flight (reads at once share one handle): a
 * dataset of thousands of local files holds no handle between row groups, so it never runs into
 * the process's limit on open files.
 */
function fileInUse(path: string, name: string) {
  let open: Promise<FileRange> | undefined;
  let users = 0;
  return async <T>(use: (file: FileRange) => Promise<T>): Promise<T> => {
    users++;
    open ??= openFileRange(path);
    const opening = open;
    try {
      return await use(await opening.catch((error: unknown) => Promise.reject(readFailure(name, error))));
    } finally {
      if (--users === 0 && open === opening) {
        open = undefined;
        await opening.then((file) => file.close()).catch(() => undefined);
      }
    }
  };
}

async function openLocal(path: string, name: string, tailBytes: number): Promise<ByteSource> {
  const withFile = fileInUse(path, name);
  const readFrom = async (file: FileRange, start: number, end: number) => {
    const bytes = await file.read(start, end - start).catch((error: unknown) => Promise.reject(readFailure(name, error)));
    if (bytes.length !== end - start) throw shortRead(name, start, end, bytes.length);
    return bytes;
  };
  const { size, tail } = await withFile(async (file) => ({
    size: file.size,
    tail: await readFrom(file, Math.max(0, file.size - tailBytes), file.size),
  }));
  return { name, size, tail, read: (start, end) => withFile((file) => readFrom(file, start, end)), close: async () => undefined };
}

function openBlob(blob: Blob, name: string): ByteSource {
  return {
    name,
    size: blob.size,
    tail: new Uint8Array(0),
    async read(start, end) {
      let buffer: ArrayBuffer;
      try {
        buffer = await blob.slice(start, end).arrayBuffer();
      } catch (error) {
        throw readFailure(name, error);
      }
      const bytes = new Uint8Array(buffer);
      if (bytes.length !== end - start) throw shortRead(name, start, end, bytes.length);
      return bytes;
    },
    close: async () => undefined,
  };
}

/** The numbers of `Content-Range: bytes a-b/size` (or `bytes *\/size` on a 416). */
function contentRange(response: Response): { start?: number; end?: number; size?: number } {
  const match = /^bytes (?:(\d+)-(\d+)|\*)\/(\d+|\*)$/.exec(response.headers.get('content-range')?.trim() ?? '');
  if (!match) return {};
  const number = (s: string | undefined) => (s === undefined || s === '*' ? undefined : Number(s));
  return { start: number(match[1]), end: number(match[2]), size: number(match[3]) };
}

interface Probe {
  size: number;
  tail: Uint8Array;
  /** Where the redirects led: later ranges go there directly. */
  finalUrl: string;
  /** The file's ETag, which every later range must carry too (a file replaced meanwhile fails). */
  etag: string | undefined;
}

/**
 * The first request: the last `tailBytes` (a suffix range), whose Content-Range gives the file's
 * size; one round trip gives the size and, for most files, the whole footer.
 */
function probe(url: string, options: FetchOptions, tailBytes: number): Promise<Probe> {
  return getWithRetries(url, { ...options, extraHeaders: { Range: `bytes=-${tailBytes}` } }, async (response) => {
    const finalUrl = response.url || url;
    const etag = response.headers.get('etag') ?? undefined;
    if (response.status === 206) {
      const { start, end, size } = contentRange(response);
      if (start === undefined || end === undefined || size === undefined || end !== size - 1 || end < start) {
        void response.body?.cancel().catch(() => undefined);
        return {
          retry: false,
          code: 'http',
          status: 206,
          message: `a 206 without a usable Content-Range (${response.headers.get('content-range')})`,
        };
      }
      const tail = await readLimited(response, end - start + 1);
      if (!tail || tail.length !== end - start + 1) return { retry: true, code: 'network', status: 206, message: 'a range body cut short' };
      return { value: { size, tail, finalUrl, etag } };
    }
    if (response.status === 416) {
      void response.body?.cancel().catch(() => undefined);
      const { size } = contentRange(response);
      // An empty file cannot satisfy any range; the footer check then names it as too small.
      if (size === 0) return { value: { size: 0, tail: new Uint8Array(0), finalUrl, etag } };
      return statusFailure(response);
    }
    if (response.status === 200) {
      // The server ignores ranges: the size is the length, and a small file's body is its tail.
      const size = Number(response.headers.get('content-length') ?? Number.NaN);
      if (!Number.isSafeInteger(size) || size < 0 || response.headers.has('content-encoding')) {
        void response.body?.cancel().catch(() => undefined);
        return { retry: false, code: 'http', status: 200, message: 'no byte ranges and no Content-Length: the file size is unknown' };
      }
      const body = size <= tailBytes ? await readLimited(response, size) : undefined;
      if (size > tailBytes) void response.body?.cancel().catch(() => undefined);
      if (body && body.length !== size) return { retry: true, code: 'network', status: 200, message: 'a body cut short' };
      return { value: { size, tail: body ?? new Uint8Array(0), finalUrl, etag } };
    }
    return statusFailure(response);
  });
}

async function openUrl(url: string, options: FetchOptions, tailBytes: number): Promise<ByteSource> {
  const first = await probe(url, options, tailBytes).catch((error: unknown) => Promise.reject(readFailure(url, error)));
  const { size, tail, etag } = first;
  const tailStart = size - tail.length;
  // Later ranges skip the redirect (one request, not two, per range). A storage URL is signed and
  // expires: when it is refused, the original URL resolves a fresh one. The storage host is another
  // origin, so it gets no Authorization header (fetch drops it on such redirects too).
  let readUrl = first.finalUrl;
  const sameOrigin = (a: string, b: string) => new URL(a).origin === new URL(b).origin;
  const headersFor = (target: string) =>
    sameOrigin(target, url)
      ? options.headers
      : Object.fromEntries(Object.entries(options.headers ?? {}).filter(([k]) => k.toLowerCase() !== 'authorization'));
  const get = (target: string, start: number, end: number, signal: AbortSignal | undefined) =>
    fetchBytes(target, {
      ...options,
      headers: headersFor(target),
      signal: anySignal(options.signal, signal),
      range: { start, end: end - 1 },
      maxBytes: end - start,
      // A stalled connection fails; a large range gets the time it needs at 1 MB/s.
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS + (end - start) / 1000,
      ...(etag === undefined ? {} : { etag }),
    });
  return {
    name: url,
    size,
    tail,
    async read(start, end, signal) {
      // Bytes the probe holds already: no request (and the only way to read a small file from a
      // server that ignores ranges).
      if (start >= tailStart && end <= size) return tail.subarray(start - tailStart, end - tailStart);
      try {
        return await get(readUrl, start, end, signal);
      } catch (error) {
        const expired = error instanceof FetchError && [401, 403, 404, 410].includes(error.status ?? 0);
        if (!expired || readUrl === url) throw readFailure(url, error);
        readUrl = url;
        return get(url, start, end, signal).catch((again: unknown) => Promise.reject(readFailure(url, again)));
      }
    },
    close: async () => undefined,
  };
}

/** Opens one input for random access; `tailBytes` of its end are read at once (the footer, mostly). */
export async function openByteSource(input: ParquetInput, index: number, options: FetchOptions, tailBytes: number): Promise<ByteSource> {
  const name = displayName(input, index);
  if (typeof input !== 'string') return openBlob(input, name);
  if (isUrl(input)) return openUrl(input, options, tailBytes);
  const path = /^file:/i.test(input) ? decodeURIComponent(new URL(input).pathname) : input;
  return openLocal(path, name, tailBytes);
}
