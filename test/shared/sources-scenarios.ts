// Scenario bodies for tar shards, WebDataset samples and HTTP fetching, shared by the Node and Deno
// tiers. HTTP scenarios take a `serve` function so each runtime can start its own 127.0.0.1 server.
import {
  fetchBytes,
  FetchError,
  fetchStream,
  isFailure,
  loadUrl,
  readTar,
  SourceError,
  webDatasetSamples,
  type WebDatasetItem,
} from '../../src/sources/index.ts';
import { check, rejectsWith } from './assert.ts';
import { collect } from './async.ts';
import { bytesEqual, payload, streamOf, writeTar, type TarEntry } from './tar-helpers.ts';

const sampleEntries = (count: number, first = 0): TarEntry[] =>
  Array.from({ length: count }, (_, i) => [
    { name: `${String(first + i).padStart(6, '0')}.jpg`, data: payload(700 + i * 37, first + i) },
    { name: `${String(first + i).padStart(6, '0')}.cls`, data: String((first + i) % 10) },
  ]).flat();

const summary = (items: WebDatasetItem[]) =>
  items
    .map((item) => (isFailure(item) ? `${item.key}!${item.error.code}` : `${item.key}:${Object.keys(item.files).sort().join(',')}`))
    .join(' ');

export const scenarios: Record<string, () => Promise<void>> = {
  async 'tar round trip: files, long names, directories, any chunking'() {
    const longName = `deep/${'n'.repeat(140)}/000001.jpg`;
    const entries: TarEntry[] = [
      { name: 'dir/', type: '5' },
      { name: 'dir/a.txt', data: 'hello' },
      { name: 'empty.bin', data: new Uint8Array(0) },
      { name: longName, data: payload(5000, 1) },
      { name: 'block.bin', data: payload(512, 2) },
    ];
    const shard = writeTar(entries);
    for (const chunk of [1, 7, 512, 100_000]) {
      const members = await collect(readTar(streamOf(shard, chunk)));
      check(
        members.map((m) => m.name).join('|') === entries.map((e) => e.name).join('|'),
        `names at chunk ${chunk}: ${members.map((m) => m.name).join('|')}`,
      );
      check(members[0]?.type === 'directory' && members[0].data === undefined, 'directory member');
      check(new TextDecoder().decode(members[1]?.data) === 'hello', 'small file bytes');
      check(members[2]?.data?.length === 0, 'empty file');
      check(
        bytesEqual(members[3]?.data, payload(5000, 1)) && bytesEqual(members[4]?.data, payload(512, 2)),
        'long-named and block-sized bytes',
      );
    }
  },

  async 'webdataset groups consecutive members by key'() {
    const shard = writeTar([...sampleEntries(3), { name: 'seg/000009.seg.png', data: 'p' }, { name: 'seg/000009.json', data: '{}' }], {
      endBlocks: false,
    });
    const items = await collect(webDatasetSamples(streamOf(shard, 333)));
    check(summary(items) === '000000:cls,jpg 000001:cls,jpg 000002:cls,jpg seg/000009:json,seg.png', summary(items));
    const second = items[1];
    check(second !== undefined && !isFailure(second), 'second sample ok');
    check(bytesEqual(second.files.jpg, payload(737, 1)) && new TextDecoder().decode(second.files.cls) === '1', 'second sample bytes');
  },

  async 'escaping names, links, duplicates and oversized members fail only their sample'() {
    const shard = writeTar([
      ...sampleEntries(1, 0),
      { name: '../evil.jpg', data: 'x' },
      { name: '/etc/passwd.cls', data: 'x' },
      { name: 'a/../../b.jpg', data: 'x' },
      { name: '000001.jpg', data: payload(5000, 9) },
      { name: '000001.cls', data: '1' },
      { name: '000002.jpg', type: '2' },
      { name: '000003.cls', data: '1' },
      { name: '000003.cls', data: '2' },
      { name: '000004.__proto__', data: 'p' },
      ...sampleEntries(1, 5),
    ]);
    const items = await collect(webDatasetSamples(streamOf(shard, 1000), { maxMemberBytes: 4096, shardName: 'mem://s0.tar' }));
    const expected =
      '000000:cls,jpg ../evil!unsafe-name /etc/passwd!unsafe-name a/../../b!unsafe-name 000001!too-large 000002!unsupported-type 000003!duplicate 000004:__proto__ 000005:cls,jpg';
    check(summary(items) === expected, summary(items));
    const failure = items.find(isFailure);
    check(
      failure?.error instanceof SourceError && failure.error.message.includes('mem://s0.tar'),
      'errors are SourceErrors naming the shard',
    );
  },

  async 'a truncated or corrupt shard ends with a clear error after the complete samples'() {
    const shard = writeTar(sampleEntries(3));
    for (const cut of [1024 + 512 + 300, 1024 + 512 + 1024 + 100, shard.length - 1024 - 1]) {
      const seen: WebDatasetItem[] = [];
      const run = async () => {
        for await (const item of webDatasetSamples(streamOf(shard.slice(0, cut), 256), { shardName: 'cut.tar' })) seen.push(item);
      };
      const error = await rejectsWith(
        run(),
        (e) => e instanceof SourceError && e.code === 'truncated' && e.message.includes('cut.tar'),
        `cut at ${cut}`,
      );
      check(
        seen.every((s) => !isFailure(s)),
        `only complete samples before the error: ${summary(seen)} / ${String(error)}`,
      );
    }
    const corrupt = shard.slice();
    const at = 1024 + 512 + 1024 + 10; // a byte inside the third member's header
    corrupt[at] = (corrupt[at] ?? 0) ^ 0xff;
    await rejectsWith(collect(readTar(streamOf(corrupt))), (e) => e instanceof SourceError && e.code === 'corrupt', 'checksum mismatch');
  },

  async 'stopping early cancels the underlying stream'() {
    let cancelled = false;
    const stream = streamOf(writeTar(sampleEntries(50)), 512, () => (cancelled = true));
    for await (const item of webDatasetSamples(stream)) {
      check(item.key === '000000', 'first sample');
      break;
    }
    check(cancelled, 'stream cancelled');
  },
};

// ---- HTTP ----------------------------------------------------------------------------------------

export type Handler = (request: Request) => Promise<Response>;
export type Serve = (handler: Handler) => Promise<{ url: string; close(): Promise<void> }>;

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  // The listener is removed once done: Deno warns about request.signal listeners left attached.
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Routes: /shard.tar, /flaky?id=…&fail=n (503 n times), /missing (404), /slow (3 s), /range (honours Range), /norange, /huge (declares 5 GiB), /endless (a chunked body that never ends). */
function testServer(shard: Uint8Array) {
  const hits = new Map<string, number>();
  const handler: Handler = async (request) => {
    const url = new URL(request.url);
    const id = `${url.pathname}?${url.searchParams.get('id') ?? ''}`;
    const hit = (hits.get(id) ?? 0) + 1;
    hits.set(id, hit);
    const body = shard.slice();
    switch (url.pathname) {
      case '/shard.tar':
      case '/norange':
        return new Response(body, { headers: { 'content-length': String(body.length) } });
      case '/flaky':
        if (hit <= Number(url.searchParams.get('fail') ?? 2)) return new Response('busy', { status: 503 });
        return new Response(body);
      case '/slow':
        await abortableDelay(3000, request.signal);
        return new Response(body);
      case '/huge':
        // Declares 5 GiB (Node's server sends the header as given; Deno.serve declares the real
        // 2 MiB, still over the 1 MiB the scenario allows).
        return new Response(new Uint8Array(2 << 20), { headers: { 'content-length': String(5 * 2 ** 30) } });
      case '/endless':
        // Chunked, never ends (until the client goes away): 64 KiB every millisecond.
        return new Response(
          new ReadableStream<Uint8Array>({
            async pull(controller) {
              await abortableDelay(1, request.signal);
              if (request.signal.aborted) return controller.close();
              controller.enqueue(new Uint8Array(64 * 1024));
            },
          }),
        );
      case '/range': {
        const match = /^bytes=(\d+)-(\d*)$/.exec(request.headers.get('range') ?? '');
        if (!match) return new Response(body);
        const start = Number(match[1]);
        const end = match[2] ? Number(match[2]) : body.length - 1;
        return new Response(body.slice(start, end + 1), {
          status: 206,
          headers: { 'content-range': `bytes ${start}-${end}/${body.length}` },
        });
      }
      default:
        return new Response('not found', { status: 404 });
    }
  };
  return { handler, hits: (path: string, id = '') => hits.get(`${path}?${id}`) ?? 0 };
}

async function withServer(
  serve: Serve,
  body: (url: string, hits: (path: string, id?: string) => number, shard: Uint8Array) => Promise<void>,
): Promise<void> {
  const shard = writeTar(sampleEntries(20));
  const { handler, hits } = testServer(shard);
  const server = await serve(handler);
  try {
    await body(server.url, hits, shard);
  } finally {
    await server.close();
  }
}

const isFetchError = (status: number | undefined, attempts: number) => (e: unknown) =>
  e instanceof FetchError && e.status === status && e.attempts === attempts;

export const httpScenarios = (serve: Serve): Record<string, () => Promise<void>> => ({
  async 'a shard streams through fetch into samples'() {
    await withServer(serve, async (url) => {
      const items = await collect(
        webDatasetSamples(await fetchStream(`${url}/shard.tar`, { timeoutMs: 5000 }), { shardName: `${url}/shard.tar` }),
      );
      check(
        items.length === 20 &&
          items.every((i) => !isFailure(i) && bytesEqual(i.files.jpg, payload(700 + Number(i.key) * 37, Number(i.key)))),
        summary(items),
      );
    });
  },

  async 'transient 503s are retried with backoff; a 404 is not'() {
    await withServer(serve, async (url, hits, shard) => {
      const bytes = await fetchBytes(`${url}/flaky?id=a&fail=2`, { retries: 3, backoffMs: 10, timeoutMs: 5000 });
      check(bytesEqual(bytes, shard) && hits('/flaky', 'a') === 3, `recovered on attempt 3 (hits ${hits('/flaky', 'a')})`);
      await rejectsWith(
        fetchBytes(`${url}/flaky?id=b&fail=5`, { retries: 1, backoffMs: 10 }),
        isFetchError(503, 2),
        'gives up after retries',
      );
      check(hits('/flaky', 'b') === 2, 'two attempts');
      await rejectsWith(fetchBytes(`${url}/missing`, { retries: 3, backoffMs: 10 }), isFetchError(404, 1), '404 is final');
      check(hits('/missing') === 1, 'no retry on 404');
    });
  },

  async 'each attempt times out; the caller can abort'() {
    await withServer(serve, async (url, hits) => {
      const started = Date.now();
      await rejectsWith(fetchBytes(`${url}/slow`, { timeoutMs: 150, retries: 1, backoffMs: 10 }), isFetchError(undefined, 2), 'timeout');
      check(Date.now() - started < 2000 && hits('/slow') === 2, `two timed-out attempts in ${Date.now() - started} ms`);
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('stop')), 100);
      await rejectsWith(
        fetchBytes(`${url}/slow`, { retries: 5, signal: controller.signal }),
        (e) => e instanceof Error && e.message === 'stop',
        'abort',
      );
    });
  },

  async 'bodies over maxBytes fail as too-large, before or while they are read, and are not retried'() {
    await withServer(serve, async (url, hits) => {
      const tooLarge = (e: unknown) => e instanceof FetchError && e.code === 'too-large' && e.attempts === 1;
      await rejectsWith(
        fetchBytes(`${url}/huge`, { maxBytes: 1 << 20, retries: 3, backoffMs: 10, timeoutMs: 10_000 }),
        tooLarge,
        'a body declared over maxBytes',
      );
      check(hits('/huge') === 1, 'too-large is not retried');
      await rejectsWith(
        fetchBytes(`${url}/endless`, { maxBytes: 4 << 20, retries: 3, timeoutMs: 30_000 }),
        tooLarge,
        'an endless chunked body',
      );
      check(hits('/endless') === 1, 'an endless body is read once, up to maxBytes');
      const item = await loadUrl(`${url}/endless`, { fetch: { maxBytes: 1 << 20, timeoutMs: 30_000 } });
      check(
        isFailure(item) && item.reason === 'too-large' && item.stage === 'fetch',
        `loadUrl reports the item as too-large at fetch: ${JSON.stringify(isFailure(item) ? item.reason : 'delivered')}`,
      );
      const ok = await fetchBytes(`${url}/shard.tar`, { maxBytes: 1 << 20 });
      check(ok.length > 0, 'a body under maxBytes is delivered');
    });
  },

  async 'range requests return 206 slices; a server ignoring Range is an error'() {
    await withServer(serve, async (url, _hits, shard) => {
      const slice = await fetchBytes(`${url}/range`, { range: { start: 1000, end: 2999 } });
      check(bytesEqual(slice, shard.subarray(1000, 3000)), 'middle range');
      const tail = await fetchBytes(`${url}/range`, { range: { start: shard.length - 10 } });
      check(bytesEqual(tail, shard.subarray(shard.length - 10)), 'open-ended range');
      await rejectsWith(fetchBytes(`${url}/norange`, { range: { start: 0, end: 9 }, retries: 2 }), isFetchError(200, 1), 'range ignored');
    });
  },
});
