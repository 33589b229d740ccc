// A mock Hugging Face Hub for the Parquet tests, as two web handlers (each tier serves them on
// 127.0.0.1: Node with serveOnNode, Deno with Deno.serve): the Hub itself (the tree listing API,
// `resolve` URLs answering 302, gated, missing and rate-limited datasets) and a second server, the
// storage host the redirects point at, which serves bytes with Range, ETag, CORS and signed URLs
// that can be made to expire (and can be made to rate-limit, or to ignore Range). Both count what they serve, so a test can check that only a column's
// byte ranges were read.
import type { Serve } from './sources-scenarios.ts';

export interface MockRepo {
  /** Files per revision (`main`, `refs/convert/parquet`, …), by path in the repository. */
  revisions: Record<string, Record<string, Uint8Array>>;
  /** Gated: every request needs `Authorization: Bearer <token>`, else 401. */
  token?: string;
  /** The next `times` requests get 429 with `Retry-After: retryAfterSeconds`. */
  rateLimit?: { times: number; retryAfterSeconds: number };
}

export interface ServedCounts {
  requests: number;
  /** Body bytes sent. */
  bytes: number;
  /** Each request's Range header (or `-` for none). */
  ranges: string[];
}

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'authorization, range',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-expose-headers': 'content-range, content-length, etag, accept-ranges, link, retry-after, x-error-code',
};

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...CORS, ...headers } });
const hubError = (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
  json({ error: message }, status, { 'x-error-code': code, ...headers });

/** A strong ETag of the bytes (FNV-1a), so a file replaced by another of the same size gets another one. */
function etagOf(bytes: Uint8Array): string {
  let hash = 0x811c9dc5;
  for (const b of bytes) hash = Math.imul(hash ^ b, 0x01000193) >>> 0;
  return `"${bytes.length.toString(16)}-${hash.toString(16)}"`;
}

export class MockHub {
  readonly repos = new Map<string, MockRepo>();
  /** Set once both are served: the Hub's own address (for Link headers) and the storage host's. */
  apiUrl = '';
  storageUrl = '';
  /** Tree entries per listing page. */
  pageSize = 2;
  /** The storage host answers every request with the whole file (200), as a server without Range support does. */
  ignoreRanges = false;
  /** The storage host's next `times` requests get 429 with `Retry-After: retryAfterSeconds`. */
  storageRateLimit: { times: number; retryAfterSeconds: number } | undefined;
  /** Hub requests, as `METHOD path` in order. */
  readonly hubRequests: string[] = [];
  /** Storage host counts per `owner/name/revision/path`. */
  readonly served = new Map<string, ServedCounts>();
  #generation = 0;

  /** Storage URLs issued so far stop working (as signed URLs expire). */
  expireSignatures(): void {
    this.#generation++;
  }

  counts(key: string): ServedCounts {
    let counts = this.served.get(key);
    if (!counts) this.served.set(key, (counts = { requests: 0, bytes: 0, ranges: [] }));
    return counts;
  }

  /** The Hub: `/api/datasets/<repo>/tree/<revision>[/<path>]` and `/datasets/<repo>/resolve/<revision>/<path>`. */
  api = async (request: Request): Promise<Response> => {
    if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: CORS });
    const url = new URL(request.url);
    this.hubRequests.push(`${request.method} ${url.pathname}${url.search}`);
    const parts = url.pathname.split('/').slice(1).map(decodeURIComponent);
    const listing = parts[0] === 'api' && parts[1] === 'datasets' && parts[4] === 'tree';
    const resolving = parts[0] === 'datasets' && parts[3] === 'resolve';
    if (!listing && !resolving) return hubError(404, 'NotFound', 'no such route');
    const repoName = listing ? `${parts[2]}/${parts[3]}` : `${parts[1]}/${parts[2]}`;
    const revision = listing ? parts[5] : parts[4];
    const path = (listing ? parts.slice(6) : parts.slice(5)).join('/');
    const repo = this.repos.get(repoName);
    // As the Hub: without a token a repository it does not show is a 401 (it may be private), with one a 404.
    if (!repo)
      return request.headers.has('authorization')
        ? hubError(404, 'RepoNotFound', 'Repository not found')
        : hubError(401, 'RepoNotFound', 'Repository not found');
    if (repo.token && request.headers.get('authorization') !== `Bearer ${repo.token}`)
      return hubError(401, 'GatedRepo', 'Access to this dataset is restricted: pass a token');
    if (repo.rateLimit && repo.rateLimit.times > 0) {
      repo.rateLimit.times--;
      return hubError(429, 'RateLimited', 'slow down', { 'retry-after': String(repo.rateLimit.retryAfterSeconds) });
    }
    const files = revision === undefined ? undefined : repo.revisions[revision];
    if (!files) return hubError(404, 'RevisionNotFound', 'Invalid rev id');
    if (resolving) {
      if (!files[path]) return hubError(404, 'EntryNotFound', 'Entry not found');
      const location = `${this.storageUrl}/blobs/${repoName}/${encodeURIComponent(revision!)}/${path}?sig=${this.#generation}`;
      return new Response(null, { status: 302, headers: { location, ...CORS } });
    }
    return this.#tree(url, files, path);
  };

  #tree(url: URL, files: Record<string, Uint8Array>, path: string): Response {
    const prefix = path === '' ? '' : `${path}/`;
    const recursive = url.searchParams.get('recursive') === 'true';
    const entries = new Map<string, { type: string; oid: string; size: number; path: string }>();
    for (const [file, bytes] of Object.entries(files)) {
      if (!file.startsWith(prefix)) continue;
      const rest = file.slice(prefix.length).split('/');
      if (recursive || rest.length === 1) entries.set(file, { type: 'file', oid: `oid-${bytes.length}`, size: bytes.length, path: file });
      else entries.set(`${prefix}${rest[0]}`, { type: 'directory', oid: 'tree', size: 0, path: `${prefix}${rest[0]}` });
    }
    if (entries.size === 0) return hubError(404, 'EntryNotFound', `${path} does not exist`);
    const all = [...entries.values()];
    const cursor = Number(url.searchParams.get('cursor') ?? 0);
    const page = all.slice(cursor, cursor + this.pageSize);
    const headers: Record<string, string> = {};
    if (cursor + this.pageSize < all.length) {
      const next = new URL(`${this.apiUrl}${url.pathname}`);
      for (const [k, v] of url.searchParams) next.searchParams.set(k, v);
      next.searchParams.set('cursor', String(cursor + this.pageSize));
      headers.link = `<${next.href}>; rel="next"`;
    }
    return json(page, 200, headers);
  }

  /** The storage host: `/blobs/<repo>/<revision>/<path>?sig=<n>`, with Range. */
  storage = async (request: Request): Promise<Response> => {
    if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: CORS });
    const url = new URL(request.url);
    const parts = url.pathname.split('/').slice(1).map(decodeURIComponent);
    const [, owner, name, revision] = parts;
    const path = parts.slice(4).join('/');
    const key = `${owner}/${name}/${revision}/${path}`;
    const counts = this.counts(key);
    counts.requests++;
    const range = request.headers.get('range');
    counts.ranges.push(range ?? '-');
    if (Number(url.searchParams.get('sig')) !== this.#generation) return new Response('signature expired', { status: 403, headers: CORS });
    const bytes = this.repos.get(`${owner}/${name}`)?.revisions[revision ?? '']?.[path];
    if (!bytes) return new Response('no such blob', { status: 404, headers: CORS });
    if (this.storageRateLimit && this.storageRateLimit.times > 0) {
      this.storageRateLimit.times--;
      return new Response('slow down', {
        status: 429,
        headers: { ...CORS, 'retry-after': String(this.storageRateLimit.retryAfterSeconds) },
      });
    }
    const headers: Record<string, string> = { ...CORS, 'accept-ranges': 'bytes', etag: etagOf(bytes) };
    const send = (body: Uint8Array, status: number, extra: Record<string, string> = {}) => {
      if (request.method !== 'HEAD') counts.bytes += body.length;
      return new Response(request.method === 'HEAD' ? null : body.slice(), {
        status,
        headers: { ...headers, ...extra, 'content-length': String(body.length), 'content-type': 'application/octet-stream' },
      });
    };
    // If-Range (which a browser's cache adds): a range only of the version it names, else the whole file.
    const ifRange = request.headers.get('if-range');
    if (range === null || this.ignoreRanges || (ifRange !== null && ifRange !== headers.etag)) return send(bytes, 200);
    const match = /^bytes=(\d*)-(\d*)$/.exec(range);
    if (!match || (match[1] === '' && match[2] === '')) return new Response('bad range', { status: 400, headers: CORS });
    const size = bytes.length;
    let start: number;
    let end: number;
    if (match[1] === '') {
      const suffix = Number(match[2]);
      start = Math.max(0, size - suffix);
      end = size - 1;
      if (suffix === 0 || size === 0)
        return new Response(null, { status: 416, headers: { ...headers, 'content-range': `bytes */${size}` } });
    } else {
      start = Number(match[1]);
      end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
      if (start >= size || end < start)
        return new Response(null, { status: 416, headers: { ...headers, 'content-range': `bytes */${size}` } });
    }
    return send(bytes.subarray(start, end + 1), 206, { 'content-range': `bytes ${start}-${end}/${size}` });
  };
}

/** Serves a mock Hub and its storage host; `endpoint` is the Hub's address for HubOptions. */
export async function serveMockHub(serve: Serve, hub = new MockHub()) {
  const storage = await serve(hub.storage);
  const api = await serve(hub.api).catch(async (error: unknown) => {
    await storage.close();
    throw error;
  });
  hub.storageUrl = storage.url;
  hub.apiUrl = api.url;
  return {
    hub,
    endpoint: api.url,
    async close() {
      await Promise.all([api.close(), storage.close()]);
    },
  };
}

/** Storage bytes served for every file of a repository revision together. */
export function bytesServed(hub: MockHub, prefix: string): number {
  let total = 0;
  for (const [key, counts] of hub.served) if (key.startsWith(prefix)) total += counts.bytes;
  return total;
}
