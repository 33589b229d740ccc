// Shards, URL lists, caches and the shards tool against a 127.0.0.1 server that injects failures
// (500s, dropped connections, slow answers, truncated bodies). Shared by the Node and Deno tiers,
// which supply the server (`serve`) and a temporary folder (`tempDir`).
import { runShards } from '../../src/cli/shards.ts';
import { listDir, readFile } from '../../src/runtime/index.ts';
import {
  DirectoryCache,
  isFailure,
  loadFiles,
  loadUrls,
  ShardError,
  urlStage,
  ShardStream,
  type ShardManifest,
} from '../../src/sources/index.ts';
import { PipelineBuilder } from '../../src/pipeline/index.ts';
import { check } from './assert.ts';
import { shardEntries } from './sources-sampling-scenarios.ts';
import type { Serve } from './sources-scenarios.ts';
import { collect } from './async.ts';
import { bytesEqual, payload, writeTar } from './tar-helpers.ts';

export type Fault = 'ok' | '500' | 'drop' | 'truncate' | 'slow';

/** The test server's content and fault plan; counts requests and concurrent requests. */
export class FaultyServer {
  readonly files = new Map<string, Uint8Array>();
  /** Per path: the fault for each successive request (the last one repeats). */
  readonly faults = new Map<string, Fault[]>();
  readonly requests = new Map<string, number>();
  delayMs = 0;
  inflight = 0;
  maxInflight = 0;
  total = 0;

  handler = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    const hit = this.requests.get(path) ?? 0;
    this.requests.set(path, hit + 1);
    this.total++;
    this.maxInflight = Math.max(this.maxInflight, ++this.inflight);
    try {
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      const plan = this.faults.get(path) ?? ['ok'];
      const fault = plan[Math.min(hit, plan.length - 1)]!;
      const body = this.files.get(path);
      if (!body) return new Response('not found', { status: 404 });
      if (fault === '500') return new Response('boom', { status: 500 });
      if (fault === 'slow') await new Promise((resolve) => setTimeout(resolve, 4000));
      const cut = fault === 'drop' ? 0 : fault === 'truncate' ? Math.floor(body.length / 2) : body.length;
      // A body that stops early and errors: the server aborts the connection mid-response.
      let sent = false;
      const stream = new ReadableStream<Uint8Array>({
        // The cut comes on the pull after the bytes: error() would discard bytes still queued.
        pull(controller) {
          if (!sent && cut > 0) controller.enqueue(body.slice(0, cut));
          else if (cut < body.length) controller.error(new Error('test server: injected cut (expected)'));
          else controller.close();
          sent = true;
        },
      });
      return new Response(stream, { headers: { 'content-length': String(body.length), 'content-type': 'application/octet-stream' } });
    } finally {
      this.inflight--;
    }
  };
}

async function withFaultyServer(serve: Serve, body: (url: string, server: FaultyServer) => Promise<void>): Promise<void> {
  const server = new FaultyServer();
  const running = await serve(server.handler);
  try {
    await body(running.url, server);
  } finally {
    await running.close();
  }
}

const keysOf = (items: Array<{ key: string; error?: unknown }>) => items.map((i) => (i.error ? `!${i.key}` : i.key));
const sampleKeys = (shard: number, count: number) =>
  Array.from({ length: count }, (_, i) => `s${String(shard).padStart(3, '0')}-${String(i).padStart(4, '0')}`);

export const httpSourceScenarios = (serve: Serve, tempDir: () => Promise<string>): Record<string, () => Promise<void>> => ({
  async 'shards over HTTP: 500s, drops, slow and cut bodies are retried; what cannot recover is reported, nothing lost silently'() {
    await withFaultyServer(serve, async (url, server) => {
      const per = 12;
      const plans: Fault[][] = [['500', '500', 'ok'], ['truncate', 'ok'], ['drop', 'ok'], ['slow', 'ok'], ['500'], ['ok', 'truncate']];
      const names = plans.map((plan, s) => {
        server.files.set(`/shard-${s}.tar`, writeTar(shardEntries(s, per)));
        server.faults.set(`/shard-${s}.tar`, plan);
        return `${url}/shard-${s}.tar`;
      });
      const stream = new ShardStream(names, {
        seed: 1,
        bufferSize: 8,
        fetch: { retries: 3, backoffMs: 5, timeoutMs: 1500 },
        reopenRetries: 2,
      });
      const items = await collect(stream);
      const delivered = items.filter((i) => !isFailure(i)).map((i) => i.key);
      const failures = items.filter(isFailure);
      check(new Set(delivered).size === delivered.length, 'no sample delivered twice');
      // Shard 5 succeeds once, then every reopen is cut: its samples came whole on the first read.
      const expected = [0, 1, 2, 3, 5].flatMap((s) => sampleKeys(s, per)).sort();
      check(delivered.slice().sort().join() === expected.join(), `delivered ${delivered.length}, expected ${expected.length}`);
      check(
        failures.length === 1 && failures[0]!.shard === names[4] && failures[0]!.stage === 'open',
        `one unrecoverable shard: ${failures.map((f) => `${f.shard}:${f.stage}`).join()}`,
      );
      const error = failures[0]!.error;
      check(error instanceof ShardError && error.samplesRead === 0 && /HTTP 500/.test(error.message), String(error));
      check(
        server.requests.get('/shard-0.tar') === 3 && server.requests.get('/shard-1.tar') === 2 && server.requests.get('/shard-4.tar') === 4,
        `attempts ${JSON.stringify([...server.requests])}`,
      );
    });
  },

  async 'a shard cut every time reports how far it got; the samples before the cut arrive once'() {
    await withFaultyServer(serve, async (url, server) => {
      server.files.set('/cut.tar', writeTar(shardEntries(0, 20)));
      server.faults.set('/cut.tar', ['truncate']);
      const items = await collect(new ShardStream([`${url}/cut.tar`], { fetch: { retries: 0 }, reopenRetries: 1 }));
      const delivered = items.filter((i) => !isFailure(i));
      const failure = items.find(isFailure);
      check(
        failure?.stage === 'read' && failure.error instanceof ShardError && failure.error.samplesRead === delivered.length,
        `failure after ${delivered.length}: ${String(failure?.error)}`,
      );
      check(
        delivered.length > 0 && delivered.length < 20 && delivered.map((d) => d.key).join() === sampleKeys(0, delivered.length).join(),
        `a prefix, in order, once: ${delivered.map((d) => d.key).join()}`,
      );
      check(server.requests.get('/cut.tar') === 2, 'reopened once');
    });
  },

  async 'a URL list keeps at most `concurrency` requests in flight and reports each failure with stage and reason'() {
    await withFaultyServer(serve, async (url, server) => {
      server.delayMs = 20;
      const urls = Array.from({ length: 30 }, (_, i) => `${url}/f/${i}.bin`);
      urls.forEach((_, i) => {
        if (i % 10 !== 3) server.files.set(`/f/${i}.bin`, payload(100 + i, i));
      });
      server.faults.set('/f/5.bin', ['500']);
      server.faults.set('/f/6.bin', ['drop', 'ok']);
      const results = await collect(loadUrls(urls, { concurrency: 4, fetch: { retries: 1, backoffMs: 5 } }));
      check(results.length === 30 && results.every((r, i) => r.key === urls[i]), 'every input once, in input order');
      check(server.maxInflight <= 4 && server.maxInflight >= 3, `max in flight ${server.maxInflight}`);
      const failed = results.filter(isFailure).map((f) => `${f.key.slice(url.length)}:${f.stage}:${f.reason}`);
      check(
        failed.join() === '/f/3.bin:fetch:HTTP 404,/f/5.bin:fetch:HTTP 500,/f/13.bin:fetch:HTTP 404,/f/23.bin:fetch:HTTP 404',
        failed.join(),
      );
      const six = results[6]!;
      check(!isFailure(six) && bytesEqual(six.bytes, payload(106, 6)), 'a dropped connection is retried');
    });
  },

  async 'as a pipeline stage: failures land in the pipeline report with stage name, input and reason'() {
    await withFaultyServer(serve, async (url, server) => {
      const urls = Array.from({ length: 12 }, (_, i) => `${url}/p/${i}.bin`);
      urls.forEach((_, i) => {
        if (i !== 4 && i !== 9) server.files.set(`/p/${i}.bin`, payload(50, i));
      });
      server.faults.set('/p/2.bin', ['500', 'ok']);
      const pipeline = new PipelineBuilder()
        .addSource(urls)
        .pipe(urlStage<string>({ fetch: { retries: 2, backoffMs: 5 } }), { name: 'fetch', concurrency: 3 })
        .build();
      const got: string[] = [];
      for await (const loaded of pipeline) got.push(loaded.key);
      const failures = pipeline.failures();
      check(got.length === 10 && failures.length === 2, `${got.length} delivered, ${failures.length} failed`);
      check(
        failures.every(
          (f) => f.stage === 'fetch' && /\/p\/(4|9)\.bin/.test(f.input) && (f.error as { reason?: string }).reason === 'HTTP 404',
        ),
        JSON.stringify(failures.map((f) => [f.stage, f.input, String(f.error)])),
      );
      check(server.maxInflight <= 3, `in flight ${server.maxInflight}`);
    });
  },

  async 'the second epoch reads from the directory cache: no request reaches the server; LRU keeps within the bound'() {
    await withFaultyServer(serve, async (url, server) => {
      const urls = Array.from({ length: 12 }, (_, i) => `${url}/c/${i}.bin`);
      urls.forEach((_, i) => {
        server.files.set(`/c/${i}.bin`, payload(1000, i));
      });
      const dir = await tempDir();
      const cache = await DirectoryCache.open(`${dir}/cache`, { maxBytes: 1 << 20 });
      const first = await collect(loadUrls(urls, { cache, concurrency: 3 }));
      const afterFirst = server.total;
      const second = await collect(loadUrls(urls, { cache, concurrency: 3 }));
      check(afterFirst === 12 && server.total - afterFirst === 0, `requests: ${afterFirst} then ${server.total - afterFirst}`);
      check(
        second.every((r, i) => !isFailure(r) && r.cached && bytesEqual(r.bytes, (first[i] as { bytes: Uint8Array }).bytes)),
        'same bytes, from the cache',
      );
      const repeated = await DirectoryCache.open(`${dir}/repeated`, { maxBytes: 1 << 20 });
      const twice = await collect(loadUrls([urls[0]!, urls[0]!, urls[0]!], { cache: repeated, concurrency: 3 }));
      check(
        twice.every((r) => !isFailure(r)) && repeated.stats().entries === 1 && bytesEqual(await repeated.get(urls[0]!), payload(1000, 0)),
        'a URL fetched three times at once is stored once, whole',
      );
      const reopened = await DirectoryCache.open(`${dir}/cache`, { maxBytes: 1 << 20 });
      check(reopened.stats().entries === 12 && bytesEqual(await reopened.get(urls[3]!), payload(1000, 3)), 'entries persist on disk');
      // A bound of about five entries: the least recently used go first.
      const small = await DirectoryCache.open(`${dir}/small`, { maxBytes: 5 * 1100 });
      for (const u of urls.slice(0, 5)) await small.put(u, payload(1000, 0));
      await small.get(urls[0]!); // now most recently used
      await small.put(urls[5]!, payload(1000, 0));
      const stats = small.stats();
      check(stats.bytes <= 5 * 1100 && stats.evictions === 1, JSON.stringify(stats));
      check(
        (await small.get(urls[0]!)) !== undefined && (await small.get(urls[1]!)) === undefined,
        'evicted the least recently used, kept the recently read',
      );
      check((await listDir(`${dir}/small`)).length === 5, 'evicted files are deleted');
    });
  },

  async 'shards through the directory cache: the next epoch opens no URL; a cut or abandoned shard is not cached'() {
    await withFaultyServer(serve, async (url, server) => {
      const names = [0, 1, 2, 3].map((s) => {
        server.files.set(`/k-${s}.tar`, writeTar(shardEntries(s, 10)));
        return `${url}/k-${s}.tar`;
      });
      server.faults.set('/k-2.tar', ['truncate', 'ok']);
      const cache = await DirectoryCache.open(`${await tempDir()}/shards`, { maxBytes: 1 << 22 });
      const options = { seed: 4, bufferSize: 5, cache, fetch: { retries: 0 } };
      // A reader that stops early leaves its shard out of the cache.
      for await (const item of new ShardStream([names[3]!], options)) if (item) break;
      check(cache.stats().entries === 0, `abandoned shard not cached: ${JSON.stringify(cache.stats())}`);
      const first = keysOf(await collect(new ShardStream(names, options)));
      check(
        server.requests.get('/k-2.tar') === 2 && cache.stats().entries === 4,
        `cut once, then cached: ${JSON.stringify(cache.stats())}`,
      );
      const before = server.total;
      const second = keysOf(await collect(new ShardStream(names, { ...options, epochs: 2 })));
      check(server.total === before, `${server.total - before} requests in later epochs`);
      const all = [0, 1, 2, 3]
        .flatMap((s) => sampleKeys(s, 10))
        .sort()
        .join();
      check(
        first.slice().sort().join() === all && second.slice(0, 40).join() === first.join() && second.slice(40).sort().join() === all,
        'every sample, same order, from the cache',
      );
    });
  },

  async 'shards tool: a folder becomes shards within the size bound; a shard stream of local files reads every image once'() {
    const dir = await tempDir();
    const { makeDir, writeFileAtomic } = await import('../../src/runtime/index.ts');
    const images = new Map<string, Uint8Array>();
    for (const [c, className] of ['ant', 'bee', 'cow'].entries()) {
      await makeDir(`${dir}/data/${className}`);
      for (let i = 0; i < 9; i++) {
        const bytes = payload(300 + 97 * i + c, c * 100 + i);
        images.set(`${c}:${bytes.length}:${bytes[0]}`, bytes);
        await writeFileAtomic(`${dir}/data/${className}/${i}.jpg`, bytes);
      }
    }
    await writeFileAtomic(`${dir}/data/ant/readme.txt`, payload(10, 1));
    const lines: string[] = [];
    const code = await runShards(
      new Map([
        ['data', `${dir}/data`],
        ['out', `${dir}/shards`],
        ['shard-size', '4k'],
      ]),
      (line) => lines.push(line),
    );
    check(code === 0, `exit ${code}: ${lines.join('\n')}`);
    const manifest = JSON.parse(new TextDecoder().decode(await readFile(`${dir}/shards/shards.json`))) as ShardManifest;
    check(
      manifest.samples === 27 && manifest.classes.join() === 'ant,bee,cow' && manifest.shards.length > 3,
      JSON.stringify(manifest).slice(0, 200),
    );
    check(
      manifest.shards.every((s) => s.bytes <= 4096),
      `sizes ${manifest.shards.map((s) => s.bytes)}`,
    );
    const paths = manifest.shards.map((s) => `${dir}/shards/${s.name}`);
    const items = await collect(new ShardStream(paths, { seed: 2, bufferSize: 6 }));
    const seen = items.map((item) => {
      check(!isFailure(item), 'no failures');
      const label = Number(new TextDecoder().decode(item.files.cls));
      const bytes = item.files.jpg!;
      check(bytesEqual(images.get(`${label}:${bytes.length}:${bytes[0]}`), bytes), `sample ${item.key} has its label's bytes`);
      return item.key;
    });
    check(seen.length === 27 && new Set(seen).size === 27, `${seen.length} samples`);
    check((await runShards(new Map([['out', dir]]), () => undefined)) === 2, 'missing --data is a usage error');
    const files = await collect(loadFiles([`${dir}/data/ant/0.jpg`, `${dir}/data/ant/missing.jpg`]));
    const missing = files[1]!;
    check(
      !isFailure(files[0]!) && isFailure(missing) && missing.stage === 'read' && missing.reason === 'not-found',
      `local list: ${isFailure(missing) ? missing.reason : 'ok'}`,
    );
  },
});
