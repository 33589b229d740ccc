// Datasets on the Hugging Face Hub as lists of Parquet URLs. The Hub converts every public dataset to
// Parquet on the `refs/convert/parquet` revision, laid out as `<config>/<split>/NNNN.parquet`
// (`<config>/partial-<split>/…` when only part was converted); its tree API lists a folder of a
// revision (`GET /api/datasets/<repo>/tree/<revision>/<path>`, JSON entries `{type, path, size}`,
// later pages behind a `Link: <…>; rel="next"` header) and each file is read through a `resolve`
// URL (`/datasets/<repo>/resolve/<revision>/<path>`) that redirects to a storage host answering
// Range requests. Reference: huggingface_hub's list_repo_tree and hf_hub_url, and the dataset
// viewer's "List Parquet files" guide.
import { CodedError, OptionChecker, OptionError } from '../errors/index.ts';
import { env } from '../runtime/index.ts';
import type { FetchOptions } from '../sources/index.ts';
import { type AttemptFailure, getWithRetries, readLimited, statusFailure } from './http.ts';

/**
 * Why the Hub did not give what was asked: `not-found` (404: no such dataset, revision, config or
 * split — or a private one without a token), `gated` (401/403: the dataset wants a token that has
 * accepted its terms), `rate-limited` (429 after the retries; `retryAfterSeconds` says when to come
 * back), `bad-response` (an answer that is not the JSON the API documents), `range` (416: a file
 * read asked for bytes the file does not have).
 */
export type HubErrorCode = 'not-found' | 'gated' | 'rate-limited' | 'bad-response' | 'range';

export class HubError extends CodedError<HubErrorCode> {
  override readonly name = 'HubError';
  constructor(
    code: HubErrorCode,
    readonly url: string,
    message: string,
    readonly status?: number,
    readonly retryAfterSeconds?: number,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** A dataset split on the Hub: `hf` is the repository (`owner/name`), `config` defaults to `default`. */
export interface HubDatasetSpec {
  hf: string;
  config?: string;
  split: string;
  /**
   * Absent (or `refs/convert/parquet`): the Hub's Parquet conversion. Any other branch, tag or
   * commit: that revision's own `.parquet` files for the split (see resolveHubDataset).
   */
  revision?: string;
}

export interface HubOptions {
  /** The Hub's address: this, else $HF_ENDPOINT, else the public Hub. */
  endpoint?: string;
  /** An access token (for gated and private datasets): this, else $HF_TOKEN. */
  token?: string;
  /** Timeouts, retries, signal (and headers) for the listing requests. */
  fetch?: FetchOptions;
}

/** A resolved split: its files' URLs, and the headers each read of them needs (the token, if any). */
export interface HubDataset {
  readonly urls: string[];
  /** `{ Authorization: 'Bearer …' }` with a token, else empty: pass as `openParquetDataset(urls, { fetch: { headers } })`. */
  readonly headers: Record<string, string>;
}

const PUBLIC_HUB = 'https://huggingface.co';
const CONVERSION = 'refs/convert/parquet';
/** A listing page's JSON is small (about 200 bytes an entry); more than this is not a listing. */
const MAX_LISTING_BYTES = 32 * 1024 * 1024;
/** Pages of one listing (the Hub pages about a thousand entries at a time). */
const MAX_LISTING_PAGES = 1000;
const REPO = /^(?:[A-Za-z0-9][\w.-]*\/)?[A-Za-z0-9][\w.-]*$/;

function hubEndpoint(options: HubOptions): string {
  return (options.endpoint ?? env('HF_ENDPOINT') ?? PUBLIC_HUB).replace(/\/+$/, '');
}

function authHeaders(options: HubOptions): Record<string, string> {
  const token = options.token ?? env('HF_TOKEN');
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** Each segment of a repository path URL-encoded, the slashes kept. */
const encodePath = (path: string) => path.split('/').map(encodeURIComponent).join('/');

/** A file's `resolve` URL; the revision is encoded whole (`refs/convert/parquet` → `refs%2Fconvert%2Fparquet`) as the Hub writes it. */
function resolveUrl(endpoint: string, repo: string, revision: string, path: string): string {
  return `${endpoint}/datasets/${repo}/resolve/${encodeURIComponent(revision)}/${encodePath(path)}`;
}

/** One page of a listing as read: its JSON and the next page, or why it is not a listing. */
type ListingPage = { json: unknown; next: string | undefined } | { error: string };

interface TreeEntry {
  type: string;
  path: string;
}

function isTreeEntry(value: unknown): value is TreeEntry {
  const v = value as { type?: unknown; path?: unknown } | null;
  return typeof v === 'object' && v !== null && typeof v.type === 'string' && typeof v.path === 'string';
}

/** The URL of `Link: <url>; rel="next"`, if any. */
function nextPage(response: Response): string | undefined {
  const link = response.headers.get('link');
  return link?.match(/<([^>]+)>\s*;\s*rel="?next"?/)?.[1];
}

function listingError(url: string, failure: AttemptFailure, attempts: number): HubError | undefined {
  const { status } = failure;
  if (status === 404) return new HubError('not-found', url, `${url}: not found (404): no such dataset, revision or path`, 404);
  // Without a token the Hub answers 401 for a repository it does not show: one that does not exist, or a private one.
  if ((status === 401 || status === 403) && failure.errorCode === 'RepoNotFound')
    return new HubError('not-found', url, `${url}: HTTP ${status}: no such dataset (or a private one this token cannot see)`, status);
  if (status === 401 || status === 403)
    return new HubError(
      'gated',
      url,
      `${url}: HTTP ${status}: the dataset is gated or private; pass a token (HubOptions.token or $HF_TOKEN) of an account that has accepted its terms`,
      status,
    );
  if (status === 429) {
    const seconds = failure.retryAfterMs === undefined ? undefined : Math.ceil(failure.retryAfterMs / 1000);
    return new HubError(
      'rate-limited',
      url,
      `${url}: rate limited (429) after ${attempts} attempt(s)${seconds === undefined ? '' : `; retry after ${seconds} s`}`,
      429,
      seconds,
    );
  }
  if (status !== undefined && status >= 400 && status < 500)
    return new HubError('bad-response', url, `${url}: HTTP ${status}: ${failure.message}`, status);
  return undefined; // network, timeout, 5xx: the FetchError says it
}

/** One listing folder, every page; `missing` says a 404 (a folder absent from the revision). */
async function listTree(url: string, options: HubOptions): Promise<TreeEntry[] | 'missing'> {
  const entries: TreeEntry[] = [];
  let page: string | undefined = url;
  const origin = new URL(url).origin;
  for (let pages = 0; page !== undefined; pages++) {
    if (pages >= MAX_LISTING_PAGES) throw new HubError('bad-response', url, `${url}: more than ${MAX_LISTING_PAGES} listing pages`);
    // A next-page link elsewhere would take the token with it.
    if (new URL(page, url).origin !== origin) throw new HubError('bad-response', url, `${url}: a listing page on another host (${page})`);
    const current: string = new URL(page, url).href;
    let missing = false;
    const result = await getWithRetries<ListingPage>(
      current,
      { ...options.fetch, extraHeaders: authHeaders(options) },
      async (response) => {
        if (!response.ok) return statusFailure(response);
        const body = await readLimited(response, MAX_LISTING_BYTES);
        if (body === undefined) return { value: { error: `a listing over ${MAX_LISTING_BYTES} bytes` } };
        try {
          return { value: { json: JSON.parse(new TextDecoder().decode(body)) as unknown, next: nextPage(response) } };
        } catch {
          return { value: { error: 'a listing that is not JSON' } };
        }
      },
      (failure, attempts) => {
        if (failure.status === 404 && pages === 0) missing = true;
        return listingError(current, failure, attempts);
      },
    ).catch((error: unknown) => {
      if (missing) return undefined;
      throw error;
    });
    if (result === undefined) return 'missing';
    if ('error' in result) throw new HubError('bad-response', current, `${current}: ${result.error}`);
    if (!Array.isArray(result.json) || !result.json.every(isTreeEntry))
      throw new HubError('bad-response', current, `${current}: expected a JSON array of {type, path} entries`);
    entries.push(...result.json);
    page = result.next;
  }
  return entries;
}

const parquetFiles = (entries: TreeEntry[]) =>
  entries
    .filter((e) => e.type === 'file' && e.path.endsWith('.parquet'))
    .map((e) => e.path)
    .sort();

/**
 * Whether a repository path holds `split`'s data, by the datasets library's default file patterns:
 * a folder named after the split, or a file name starting with it (`train-00000-of-00004.parquet`,
 * `test.parquet`).
 */
function inSplit(path: string, split: string): boolean {
  const parts = path.split('/');
  const file = parts.pop() ?? '';
  return parts.includes(split) || new RegExp(`^${split.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([-._ 0-9]|$)`).test(file);
}

/**
 * Lists the Parquet files of one split of a Hub dataset as `resolve` URLs, sorted by name, with the
 * headers to read them with. Without `revision` (or with `refs/convert/parquet`) these are the
 * Hub's conversion, `<config>/<split>/*.parquet` (or `partial-<split>` when the Hub converted only
 * part of a large split); with another revision, that revision's own `.parquet` files whose path
 * names the split (under `<config>/` unless the config is `default`). The token, when there is one,
 * goes with every listing request and is returned in `headers` for the file reads.
 */
export async function resolveHubDataset(spec: HubDatasetSpec, options: HubOptions = {}): Promise<HubDataset> {
  const checked = new OptionChecker('resolveHubDataset spec', spec, ['hf', 'config', 'split', 'revision']);
  for (const field of ['hf', 'split', 'config', 'revision'] as const) {
    const value = checked.raw(field);
    if ((value !== undefined || field === 'hf' || field === 'split') && (typeof value !== 'string' || value === '' || value.includes('..')))
      checked.fail(field, 'a non-empty string');
  }
  if (!REPO.test(spec.hf)) checked.fail('hf', "a repository name, 'owner/name'");
  new OptionChecker('resolveHubDataset options', options, ['endpoint', 'token', 'fetch']);
  const endpoint = hubEndpoint(options);
  const config = spec.config ?? 'default';
  const revision = spec.revision ?? CONVERSION;
  const api = `${endpoint}/api/datasets/${spec.hf}/tree/${encodeURIComponent(revision)}`;
  let paths: string[];
  if (revision === CONVERSION) {
    paths = [];
    for (const folder of [spec.split, `partial-${spec.split}`]) {
      const listed = await listTree(`${api}/${encodePath(`${config}/${folder}`)}`, options);
      if (listed === 'missing') continue;
      paths = parquetFiles(listed);
      break;
    }
  } else {
    const listed = await listTree(`${api}?recursive=true`, options);
    if (listed === 'missing') throw new HubError('not-found', api, `${api}: not found (404): no such dataset or revision`, 404);
    const prefix = config === 'default' ? '' : `${config}/`;
    paths = parquetFiles(listed).filter((p) => p.startsWith(prefix) && inSplit(p.slice(prefix.length), spec.split));
  }
  if (paths.length === 0)
    throw new HubError(
      'not-found',
      api,
      `${spec.hf}: no Parquet files for config '${config}', split '${spec.split}' at revision '${revision}'`,
    );
  return { urls: paths.map((path) => resolveUrl(endpoint, spec.hf, revision, path)), headers: authHeaders(options) };
}

/**
 * The `resolve` URL of an `hf://datasets/<owner>/<name>[@<revision>]/<path>` address (the form the
 * datasets library and huggingface_hub's HfFileSystem use). The revision defaults to `main`; it may
 * be written URL-encoded (`@refs%2Fconvert%2Fparquet`) or, for `refs/convert/…` and `refs/pr/…`,
 * as it is.
 */
export function hfPathToUrl(path: string, options: Pick<HubOptions, 'endpoint'> = {}): string {
  const match =
    typeof path === 'string' ? /^hf:\/\/datasets\/([^/@]+\/[^/@]+)(?:@(refs\/(?:convert|pr)\/[^/]+|[^/]+))?\/(.+)$/.exec(path) : null;
  if (!match) throw new OptionError('hfPathToUrl', 'path', path, "an 'hf://datasets/<owner>/<name>[@<revision>]/<file>' address");
  const [, repo = '', revision = 'main', file = ''] = match;
  let decoded: string;
  try {
    decoded = decodeURIComponent(revision);
  } catch {
    throw new OptionError('hfPathToUrl', 'path', path, 'a revision that is valid URL encoding');
  }
  if (!REPO.test(repo)) throw new OptionError('hfPathToUrl', 'path', path, "a repository name, 'owner/name'");
  return resolveUrl(hubEndpoint(options), repo, decoded, file);
}
