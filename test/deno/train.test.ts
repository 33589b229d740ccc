import './limits.ts';
import { failedOpenReleasesWhatItMade, shortTrainingRunReports, trainingFromShards } from '../shared/train-scenarios.ts';

declare const Deno: {
  makeTempDir(): Promise<string>;
  readFile(path: string): Promise<Uint8Array>;
  test(name: string, fn: () => Promise<void>): void;
  serve(
    options: { hostname: string; port: number; onListen?: () => void },
    handler: (request: Request) => Promise<Response>,
  ): { addr: { port: number }; shutdown(): Promise<void> };
};

Deno.test('tandem train runs end to end in Deno and writes its JSON and HTML reports', async () => {
  await shortTrainingRunReports(await Deno.makeTempDir());
});

Deno.test('a training session that fails while opening stops the pool threads it started', failedOpenReleasesWhatItMade);

/** Serves a directory's files on 127.0.0.1 (the shards and their manifest). */
async function serveDirectory(root: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: () => {} }, async (request) => {
    const name = new URL(request.url).pathname.slice(1);
    if (!/^[\w.-]+$/.test(name)) return new Response(null, { status: 404 });
    try {
      return new Response(new Blob([(await Deno.readFile(`${root}/${name}`)) as Uint8Array<ArrayBuffer>]));
    } catch {
      return new Response(null, { status: 404 });
    }
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

Deno.test('tandem train --shards streams tar shards over HTTP from 127.0.0.1', async () => {
  await trainingFromShards(await Deno.makeTempDir(), serveDirectory);
});
