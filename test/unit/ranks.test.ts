// Two processes, RANK=0 and RANK=1 of WORLD_SIZE=2, read the same HTTP shards (served on
// 127.0.0.1) as `tandem train --shards URL` does: per epoch, their samples together are the
// dataset exactly once, with no sample in both. Then elastic resumption: two ranks save their
// positions and are killed with SIGKILL while reading ahead; 3 ranks (or 1) regroup the saved
// positions and finish both epochs, every remaining sample exactly once.
import { execFile, spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ShardManifest, writeFolderShards } from '../../src/sources/index.ts';
import { encodeJpeg, renderSample } from '../../src/synthetic/index.ts';

const repo = new URL('../../', import.meta.url).pathname;
const deno = join(repo, 'node_modules', '.bin', 'deno');

let dir = '';
let url = '';
let manifest: ShardManifest;
let server: ReturnType<typeof createServer>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tandem-ranks-'));
  for (let i = 0; i < 60; i++) {
    const s = renderSample(5, i, { width: 64, height: 48, classes: 3 });
    mkdirSync(join(dir, 'data', `c${s.label}`), { recursive: true });
    writeFileSync(
      join(dir, 'data', `c${s.label}`, `${String(i).padStart(3, '0')}.jpg`),
      encodeJpeg(s.rgb, s.width, s.height, { quality: 80 }),
    );
  }
  manifest = await writeFolderShards(join(dir, 'data'), { out: join(dir, 'shards'), perShard: 6, seed: 1 });
  server = createServer((req, res) => {
    const file = join(dir, 'shards', decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    if (!file.startsWith(join(dir, 'shards')) || !existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200);
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('two ranks over the same HTTP shards read the dataset exactly once per epoch, without overlap', async () => {
  expect(manifest.shards.length).toBe(10);
  const runRank = (rank: number) =>
    new Promise<{ perEpoch: number; epochs: string[][] }>((resolve, reject) =>
      execFile(
        deno,
        ['run', '-A', '--no-check', join(repo, 'test/fixtures/rank-reader.ts'), url],
        { env: { ...process.env, RANK: String(rank), WORLD_SIZE: '2' } },
        (error, stdout, stderr) =>
          error ? reject(new Error(`rank ${rank}: ${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout.trim().split('\n').at(-1)!)),
      ),
    );
  const [r0, r1] = await Promise.all([runRank(0), runRank(1)]);
  const all = manifest.samples;
  expect(r0.perEpoch + r1.perEpoch).toBe(all);
  for (const epoch of [0, 1]) {
    const a = r0.epochs[epoch]!;
    const b = r1.epochs[epoch]!;
    expect(a.length).toBe(r0.perEpoch);
    expect(b.length).toBe(r1.perEpoch);
    const keyOf = (k: string) => k.replace(/^.*\//, ''); // shard file and sample key
    expect(a.filter((k) => b.includes(k))).toEqual([]);
    expect(new Set([...a, ...b].map(keyOf)).size).toBe(all);
  }
  // A new epoch is a new order, not a replay.
  expect(r0.epochs[0]).not.toEqual(r0.epochs[1]);
}, 120_000);

/**
 * Starts one rank-reader process; resolves with its first JSON line. With `kill`, the process is
 * killed with SIGKILL as soon as it has printed it (it is still reading ahead, or waiting).
 */
function rankProcess(args: string[], rank: number, worldSize: number, kill: boolean): Promise<{ tags: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(deno, ['run', '-A', '--no-check', join(repo, 'test/fixtures/rank-reader.ts'), url, ...args], {
      env: { ...process.env, RANK: String(rank), WORLD_SIZE: String(worldSize) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let line: string | undefined;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (line === undefined && out.includes('\n')) {
        line = out.slice(0, out.indexOf('\n'));
        if (kill) child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (line === undefined || (!kill && code !== 0)) reject(new Error(`rank ${rank} of ${worldSize}: exit ${code ?? signal}\n${err}`));
      else resolve(JSON.parse(line) as { tags: string[] });
    });
  });
}

for (const [from, to] of [
  [2, 3],
  [2, 1],
] as const) {
  it(`elastic: ${from} ranks killed mid-epoch, resumed as ${to}: every sample of both epochs exactly once across the cut`, async () => {
    const states = join(dir, `states-${from}-${to}`);
    mkdirSync(states);
    // Rank 0 stops in its first epoch, rank 1 in its second (30 samples per rank and epoch).
    const stops = [17, 41];
    const paths = stops.map((_, r) => join(states, `rank${r}.json`));
    const before = await Promise.all(stops.map((n, r) => rankProcess(['stop', String(n), paths[r]!], r, from, true)));
    const after = await Promise.all(Array.from({ length: to }, (_, r) => rankProcess(['resume', ...paths], r, to, false)));
    const tags = [...before, ...after].flatMap((r) => r.tags);
    for (const epoch of [0, 1]) {
      const mine = tags.filter((t) => t.startsWith(`${epoch}:`)).map((t) => t.slice(2));
      expect(mine.length).toBe(manifest.samples);
      expect(new Set(mine).size).toBe(manifest.samples);
    }
    // The new ranks share the work: none is left idle.
    for (const r of after) expect(r.tags.length).toBeGreaterThan(0);
  }, 120_000);
}
